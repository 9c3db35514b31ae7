package io.sluice.server.tls;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/** The admin {@code GET /certs} document and the status page's certificate table. */
public final class TlsAdmin {

    private TlsAdmin() {
    }

    /** JSON: the provider, then per TLS listener its settings and loaded certificates with days left. */
    public static String json(List<DownstreamTls> listeners) {
        StringBuilder b = new StringBuilder(256).append("{\"provider\":");
        quote(b, TlsProvider.name()).append(",\"provider_detail\":");
        quote(b, TlsProvider.describe()).append(",\"listeners\":[");
        Instant now = Instant.now();
        for (int i = 0; i < listeners.size(); i++) {
            DownstreamTls t = listeners.get(i);
            TlsSnapshot s = t.current();
            b.append(i == 0 ? "" : ",").append("{\"listener\":");
            quote(b, t.listener()).append(",\"protocols\":");
            strings(b, s.config().protocols()).append(",\"alpn\":");
            strings(b, s.config().alpn()).append(",\"client_auth\":");
            quote(b, s.config().clientAuth().jsonName()).append(",\"session_tickets\":").append(s.config().sessionTickets())
                    .append(",\"reloads_ok\":").append(t.metrics().reloads(true))
                    .append(",\"reloads_failed\":").append(t.metrics().reloads(false)).append(",\"certificates\":[");
            List<TlsSnapshot.Loaded> loaded = s.loaded();
            for (int j = 0; j < loaded.size(); j++) {
                TlsSnapshot.Loaded l = loaded.get(j);
                b.append(j == 0 ? "" : ",").append("{\"name\":");
                quote(b, l.name()).append(",\"file\":");
                quote(b, l.file()).append(",\"server_names\":");
                strings(b, l.serverNames()).append(",\"subject\":");
                quote(b, l.subject()).append(",\"issuer\":");
                quote(b, l.issuer()).append(",\"not_before\":");
                quote(b, l.notBefore().toString()).append(",\"not_after\":");
                quote(b, l.notAfter().toString()).append(",\"days_left\":")
                        .append(Duration.between(now, l.notAfter()).toDays()).append(",\"sha256\":");
                quote(b, l.fingerprint()).append('}');
            }
            b.append("]}");
        }
        return b.append("]}\n").toString();
    }

    /** An HTML section for the status page (empty without TLS listeners). */
    public static String html(List<DownstreamTls> listeners) {
        if (listeners.isEmpty()) {
            return "";
        }
        StringBuilder b = new StringBuilder("<h2>TLS certificates</h2><p>provider: ").append(esc(TlsProvider.describe()))
                .append("</p><table><tr><th>listener</th><th>certificate</th><th>subject</th><th>not after</th>"
                        + "<th>days left</th></tr>");
        Instant now = Instant.now();
        for (DownstreamTls t : listeners) {
            for (TlsSnapshot.Loaded l : t.current().loaded()) {
                b.append("<tr><td>").append(esc(t.listener())).append("</td><td>").append(esc(l.name()))
                        .append("</td><td>").append(esc(l.subject())).append("</td><td>").append(l.notAfter())
                        .append("</td><td>").append(Duration.between(now, l.notAfter()).toDays()).append("</td></tr>");
            }
        }
        return b.append("</table>").toString();
    }

    private static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }

    private static StringBuilder strings(StringBuilder b, List<String> l) {
        b.append('[');
        for (int i = 0; i < l.size(); i++) {
            quote(b.append(i == 0 ? "" : ","), l.get(i));
        }
        return b.append(']');
    }

    private static StringBuilder quote(StringBuilder b, String s) {
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"');
    }
}
