import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * The JVM's own TCP limit over loopback, for comparison with iperf3 and the tcp provider's
 * queue pair: a pair of blocking SocketChannels, one thread writing 1 MiB direct buffers for
 * a few seconds, another reading them into a 1 MiB direct buffer; no framing, no ACKs.
 *
 *   java bench/PlainSocketPair.java [seconds] [address]     # prints GB/s and the sender's CPU per GB
 */
public class PlainSocketPair {
    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        String address = args.length > 1 ? args[1] : "127.0.0.21";
        int size = 1 << 20;
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(address, 0));
            Thread reader = new Thread(() -> {
                try (SocketChannel c = server.accept()) {
                    c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                    ByteBuffer b = ByteBuffer.allocateDirect(size);
                    while (c.read(b.clear()) >= 0) {
                        // discard
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            reader.start();
            long bytes = 0;
            double wall;
            double cpu;
            try (SocketChannel c = SocketChannel.open(server.getLocalAddress())) {
                c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                ByteBuffer b = ByteBuffer.allocateDirect(size);
                var threads = ManagementFactory.getThreadMXBean();
                long cpu0 = threads.getCurrentThreadCpuTime();
                long t0 = System.nanoTime();
                long end = t0 + seconds * 1_000_000_000L;
                while (System.nanoTime() < end) {
                    b.clear();
                    while (b.hasRemaining()) {
                        bytes += c.write(b);
                    }
                }
                wall = (System.nanoTime() - t0) / 1e9;
                cpu = (threads.getCurrentThreadCpuTime() - cpu0) / 1e9;
            }
            reader.join();
            System.out.printf("%.2f GB/s (%.0f MiB/s), sender %.3f CPU s per GB%n", bytes / wall / 1e9,
                    bytes / wall / (1 << 20), cpu / (bytes / 1e9));
        }
    }
}
