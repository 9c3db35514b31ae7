#!/usr/bin/env bash
# nmt-table.sh DIR RUN...: one markdown row per run and phase (idle bolt http after) with the NMT
# committed KiB of the categories that matter, RSS/RssAnon/RssFile (MiB), Netty's direct memory (KiB).
dir=$1; shift
echo "| run | phase | RSS/anon/file MiB | total | heap | class+metaspace | code | other (direct) | arena chunk | shared class space | symbol | thread | netty direct KiB |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for r in "$@"; do for p in idle bolt http after; do
  f=$dir/$r-$p.nmt; [ -f "$f" ] || continue
  v() { grep -E "^- +$1 \(" "$f" | sed -E 's/.*committed=([0-9]+)KB.*/\1/'; }
  tot=$(grep -E '^Total' "$f" | sed -E 's/.*committed=([0-9]+)KB.*/\1/')
  cm=$(( $(v Class) + $(v Metaspace) ))
  nd=$(awk '/^sluice_netty_direct/ {printf "%d", $2/1024}' "$dir/$r-$p.metrics")
  echo "| $r | $p | $(cat "$dir/$r-$p.status") | $tot | $(v 'Java Heap') | $cm | $(v Code) | $(v Other) | $(v 'Arena Chunk') | $(v 'Shared class space') | $(v Symbol) | $(v Thread) | $nd |"
done; done
