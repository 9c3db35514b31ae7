#!/usr/bin/env python3
"""Shares of a collapsed-stack profile (async-profiler's "collapsed" output, cstack=vm): where the
samples' leaf frames are (BoringSSL = frames in the netty-tcnative library, kernel, JVM/libc native,
Java), which threads, the inclusive share of the frames that matter for a TLS handshake, and the top
leaf frames. With HANDSHAKES (and the sampling INTERVAL_US, 1000) each line also shows µs of CPU per
handshake. usage: profile-shares.py FILE [TOP [HANDSHAKES [INTERVAL_US]]]"""
import collections
import sys

MARKS = [  # (label, substring of a frame): inclusive shares
    ("SSL.doHandshake (BoringSSL handshake, via JNI)", "io/netty/internal/tcnative/SSL.doHandshake"),
    ("SSL.readFromSSL (decrypt; post-handshake messages)", "io/netty/internal/tcnative/SSL.readFromSSL"),
    ("SSL.writeToSSL (encrypt)", "io/netty/internal/tcnative/SSL.writeToSSL"),
    ("certificate callback (key material chosen in Java)", "CertificateCallbackTask.runTask"),
    ("SSL.setKeyMaterial", "io/netty/internal/tcnative/SSL.setKeyMaterial"),
    ("session cache upcall (OpenSslSessionCache)", "io/netty/handler/ssl/OpenSslSessionCache"),
    ("delegated tasks (SslHandler.runDelegatedTasks)", "io/netty/handler/ssl/SslHandler.runDelegatedTasks"),
    ("engine creation (SslContext.newHandler)", "io/netty/handler/ssl/SslContext.newHandler"),
    ("SNI (SniHandler: ClientHello parse, context lookup)", "io/netty/handler/ssl/SniHandler"),
    ("engine release (ReferenceCountedOpenSslEngine.shutdown)", "io/netty/handler/ssl/ReferenceCountedOpenSslEngine.shutdown"),
    ("finalizers (Finalizer)", "java/lang/ref/Finalizer"),
    ("SessionTickets.flush (TLS 1.3 tickets)", "io/sluice/server/tls/SessionTickets.flush"),
    ("TlsConnectionHandler", "io/sluice/server/tls/TlsConnectionHandler"),
    ("pipeline setup (ChannelInitializer.initChannel)", "io/netty/channel/ChannelInitializer.initChannel"),
    ("accept (ServerBootstrapAcceptor.channelRead)", "ServerBootstrap$ServerBootstrapAcceptor.channelRead"),
    ("proxying (HttpProxyHandler)", "io/sluice/server/http/HttpProxyHandler"),
    ("epoll wait", "io/netty/channel/epoll/Native.epollWait"),
    ("socket writes (Socket.send*/writev)", "io/netty/channel/unix/Socket.send"),
    ("socket close", "io/netty/channel/unix/Socket.close"),
    ("kernel (any syscall)", "entry_SYSCALL_64"),
]


# what a BoringSSL sample computes, by the innermost frame that names it (first match wins)
CRYPTO = [
    ("bignum: RSA, ECDSA scalar arithmetic", ("bn_", "BN_", "rsa", "RSA", "mont", "rsaz", "RSAZ")),
    ("X25519", ("x25519", "curve25519", "fe_", "fe4_", "ge_")),
    ("P-256 / ECDSA", ("p256", "nistz256", "ecdsa", "ECDSA", "ec_", "EC_")),
    ("SHA-2: transcript, HKDF/HMAC key schedule, digests", ("sha", "SHA", "hkdf", "HKDF", "hmac", "HMAC")),
    ("AES-GCM (records, tickets)", ("aes", "AES", "gcm", "aead", "AEAD")),
    ("malloc/free/memcpy", ("malloc", "free", "memcpy", "memmove", "memset", "_int_")),
]
JVM_NATIVE = ("jni_", "JNI", "JavaCalls", "MemAllocator", "InstanceKlass", "ObjAllocator", "Runtime1", "OptoRuntime",
              "SharedRuntime", "java_lang_", "JNIHandles", "AccessInternal", "OopStorage", "ThreadInVMfromNative")


def is_java(frame):
    return "/" in frame and ".so" not in frame and "::" not in frame and not frame.startswith("[")


def kind(frames):
    """What the leaf frame of a stack is. A native frame below a JNI method of tcnative (and not the
    JVM's own JNI support code) is BoringSSL's work, libc calls made by it included."""
    leaf = frames[-1]
    if leaf.endswith("_[k]"):
        return "kernel"
    if is_java(leaf):
        return "Java"
    if "tcnative" in leaf and ".so" in leaf:
        return "BoringSSL (tcnative library)"
    java = [f for f in frames if is_java(f)]
    if java and java[-1].startswith("io/netty/internal/tcnative/") and not leaf.startswith(JVM_NATIVE):
        return "BoringSSL (tcnative library)"
    return "JVM/libc native (allocation, JNI, stubs, GC)"


def main():
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    handshakes = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    interval_us = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
    total = 0
    kinds, threads, marks, leaves, java_self, ssl = (collections.Counter() for _ in range(6))
    for line in open(path):
        line = line.rstrip()
        if not line:
            continue
        stack, n = line.rsplit(" ", 1)
        n = int(n)
        total += n
        frames = stack.split(";")
        app = frames[0] == "java/lang/Thread.run"
        kinds[kind(frames) if app else "other threads (GC, JIT, VM)"] += n
        threads["Java threads (event loops)" if app else "other threads (GC, JIT, VM)"] += n
        for label, s in MARKS:
            if any(s in f for f in frames):
                marks[label] += n
        leaves[frames[-1]] += n
        if app and kind(frames) == "BoringSSL (tcnative library)":
            native = frames[max(i for i, f in enumerate(frames) if is_java(f)) + 1:]
            what = "other (handshake state machine, X.509, BIO, tcnative glue)"
            for f in reversed(native):
                label = next((lbl for lbl, names in CRYPTO if any(w in f for w in names)), None)
                if label:
                    what = label
                    break
            if any("(deleted)" in f for f in native):
                what = "unnamed (library deleted after loading: no symbols)"
            ssl[what] += n
        for f in reversed(frames):  # the innermost Java frame: who is paying
            if is_java(f):
                java_self[f] += n
                break
    if total == 0:
        print("no samples")
        return
    def pct(v):
        per = f" {v * interval_us / handshakes:7.1f} µs/hs" if handshakes else ""
        return f"{v:7d} {100.0 * v / total:5.1f}%{per}"
    print(f"samples {total} ({path})" + (f", {handshakes} handshakes" if handshakes else ""))
    print("\n-- where the leaf frame is")
    for k, v in kinds.most_common():
        print(pct(v), k)
    print("\n-- inclusive shares")
    for label, _ in MARKS:
        print(pct(marks[label]), label)
    print(f"\n-- top {top} leaf frames")
    for k, v in leaves.most_common(top):
        print(pct(v), k[:160])
    print("\n-- BoringSSL by what it computes (the innermost frame that names it)")
    for k, v in ssl.most_common(top):
        print(pct(v), k[:160])
    print(f"\n-- top {top} innermost Java frames (a native or kernel leaf counts for its Java caller)")
    for k, v in java_self.most_common(top):
        print(pct(v), k[:160])


if __name__ == "__main__":
    main()
