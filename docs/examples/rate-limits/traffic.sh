#!/usr/bin/env bash
# 30 requests of tenant acme in one curl run (well within a second), alternating between the gateways
args=(); for i in $(seq 1 30); do args+=(-o /dev/null "http://127.0.0.1:$((i % 2 == 0 ? 2047 : 2046))/"); done
curl -s -H 'x-tenant: acme' -w '%{http_code} ' "${args[@]}"; echo
