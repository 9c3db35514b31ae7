package io.sluice.server.http.rules;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;

import java.util.Arrays;

/**
 * Edits a complete HTTP/1.1 head in bytes (as the proxy is about to send it): drops header lines
 * by name and appends new lines before the blank line. One instance per connection, cleared for
 * every head, so an edit allocates only the new head buffer. Names to drop are lower case; the
 * head's lines are compared ignoring ASCII case.
 */
public final class HeadEdit {

    private byte[][] drop = new byte[8][];
    private int dropCount;
    private final StringBuilder add = new StringBuilder(128);

    public HeadEdit clear() {
        dropCount = 0;
        add.setLength(0);
        return this;
    }

    public boolean isEmpty() {
        return dropCount == 0 && add.length() == 0;
    }

    /** Drop lines named {@code lowerName}. */
    public HeadEdit drop(byte[] lowerName) {
        if (dropCount == drop.length) {
            drop = Arrays.copyOf(drop, dropCount * 2);
        }
        drop[dropCount++] = lowerName;
        return this;
    }

    /** Start an added line (the value follows through {@link #value}). */
    StringBuilder line(String name) {
        return add.append(name).append(": ");
    }

    HeadEdit endLine() {
        add.append("\r\n");
        return this;
    }

    public HeadEdit add(String name, String value) {
        line(name).append(value);
        return endLine();
    }

    /** The edited head; takes ownership of {@code head} (released, or returned when nothing changes). */
    public ByteBuf apply(ByteBufAllocator alloc, ByteBuf head) {
        if (isEmpty()) {
            return head;
        }
        int start = head.readerIndex();
        int end = head.writerIndex();
        ByteBuf out = alloc.directBuffer(head.readableBytes() + add.length());
        int lineEnd = head.indexOf(start, end, (byte) '\n');
        out.writeBytes(head, start, lineEnd + 1 - start); // start line
        int p = lineEnd + 1;
        while (p < end) {
            int nl = head.indexOf(p, end, (byte) '\n');
            if (nl < 0) {
                nl = end - 1;
            }
            boolean blank = nl == p || nl == p + 1 && head.getByte(p) == '\r';
            if (blank) {
                break;
            }
            if (dropCount == 0 || !dropped(head, p, nl)) {
                out.writeBytes(head, p, nl + 1 - p);
            }
            p = nl + 1;
        }
        ByteBufUtil.writeAscii(out, add);
        out.writeByte('\r').writeByte('\n');
        head.release();
        return out;
    }

    private boolean dropped(ByteBuf head, int from, int to) {
        int colon = head.indexOf(from, to, (byte) ':');
        if (colon < 0) {
            return false;
        }
        int len = colon - from;
        for (int d = 0; d < dropCount; d++) {
            byte[] n = drop[d];
            if (n.length != len) {
                continue;
            }
            boolean eq = true;
            for (int i = 0; i < len && eq; i++) {
                int c = head.getByte(from + i);
                if (c >= 'A' && c <= 'Z') {
                    c += 32;
                }
                eq = c == n[i];
            }
            if (eq) {
                return true;
            }
        }
        return false;
    }
}
