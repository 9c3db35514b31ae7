package io.sluice.codec.bolt;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageEncoder;

import java.util.List;

/**
 * Writes {@link BoltFrame}s as their bytes, unchanged (a frame already is its wire form; rewrite
 * the request id with {@link BoltFrame#rewriteRequestId} before writing). Takes ownership of each
 * frame: its buffer is handed on to the transport, which releases it. Sits in a Bolt pipeline
 * next to {@link BoltFrameDecoder}; stateless and sharable.
 */
@ChannelHandler.Sharable
public final class BoltFrameEncoder extends MessageToMessageEncoder<BoltFrame> {

    /** The one instance. */
    public static final BoltFrameEncoder INSTANCE = new BoltFrameEncoder();

    private BoltFrameEncoder() {
        super(BoltFrame.class);
    }

    @Override
    protected void encode(ChannelHandlerContext ctx, BoltFrame frame, List<Object> out) {
        // MessageToMessageEncoder releases the frame after encode: hand on our own reference.
        out.add(frame.content().retain());
    }
}
