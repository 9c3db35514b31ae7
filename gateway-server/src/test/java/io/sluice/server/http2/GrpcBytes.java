package io.sluice.server.http2;

import io.grpc.MethodDescriptor;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/** gRPC method descriptors over raw byte arrays: real grpc-java calls without generated code. */
final class GrpcBytes {

    static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    private GrpcBytes() {
    }

    static MethodDescriptor<byte[], byte[]> unary(String fullMethod) {
        return of(fullMethod, MethodDescriptor.MethodType.UNARY);
    }

    static MethodDescriptor<byte[], byte[]> of(String fullMethod, MethodDescriptor.MethodType type) {
        return MethodDescriptor.<byte[], byte[]>newBuilder().setType(type).setFullMethodName(fullMethod)
                .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();
    }
}
