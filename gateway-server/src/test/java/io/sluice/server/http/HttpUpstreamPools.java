package io.sluice.server.http;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.EventLoop;
import io.sluice.core.time.Scheduler;

/** Tests outside this package: an {@link HttpUpstreamPool} on {@code loop} with an injected scheduler (clock), no meters. */
public final class HttpUpstreamPools {

    private HttpUpstreamPools() {
    }

    public static HttpUpstreamPool create(EventLoop loop, Scheduler scheduler, Bootstrap template) {
        return new HttpUpstreamPool(loop, scheduler, template, name -> null);
    }
}
