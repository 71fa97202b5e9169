package io.netreduce.examples.launch;

import io.netreduce.collectives.EnvironmentVariables;

import io.netreduce.collectives.RankJvmOptions;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Starts P worker JVMs on this machine the way a launcher such as torchrun does: same
 * class path, one process per rank, rank and rendezvous in environment variables. Their
 * output is passed on line by line with a {@code [rank r]} prefix, and each worker's
 * last {@code RESULT} line is kept. Every process is waited for with a deadline and
 * killed if it overruns or if the launcher fails.
 */
public final class WorkerProcesses {

    /** What one worker process ended with. */
    public record Outcome(int rank, int exitCode, String resultLine) {
    }

    private WorkerProcesses() {
    }

    /**
     * Runs {@code mainClass args} as ranks 0..P-1 with {@code env} plus NETREDUCE_RANK,
     * NETREDUCE_WORLD_SIZE, NETREDUCE_MASTER_ADDR and NETREDUCE_MASTER_PORT.
     */
    public static List<Outcome> run(int workers, String mainClass, List<String> args, Map<String, String> env,
                                    Duration timeout, Consumer<String> output) {
        if (workers < 1) {
            throw new IllegalArgumentException("need at least one worker, got " + workers);
        }
        int masterPort = freeTcpPort();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<Process> processes = new ArrayList<>();
        List<Thread> pumps = new ArrayList<>();
        String[] results = new String[workers];
        try {
            for (int r = 0; r < workers; r++) {
                List<String> command = new ArrayList<>(List.of(java, "-Xmx1g"));
                command.addAll(RankJvmOptions.recommended()); // the ring's Vector API sum
                command.addAll(List.of("-cp", System.getProperty("java.class.path"), mainClass));
                command.addAll(args);
                ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
                pb.environment().putAll(env);
                pb.environment().put(EnvironmentVariables.RANK, Integer.toString(r));
                pb.environment().put(EnvironmentVariables.WORLD_SIZE, Integer.toString(workers));
                pb.environment().put(EnvironmentVariables.MASTER_ADDR, "127.0.0.1");
                pb.environment().put(EnvironmentVariables.MASTER_PORT, Integer.toString(masterPort));
                Process p = pb.start();
                processes.add(p);
                int rank = r;
                Thread pump = new Thread(() -> pump(p, rank, output, results), "worker-" + r + "-output");
                pump.setDaemon(true);
                pump.start();
                pumps.add(pump);
            }
            long deadline = System.nanoTime() + timeout.toNanos();
            List<Outcome> outcomes = new ArrayList<>();
            for (int r = 0; r < workers; r++) {
                Process p = processes.get(r);
                long left = deadline - System.nanoTime();
                if (!p.waitFor(Math.max(0, left), TimeUnit.NANOSECONDS)) {
                    throw new IllegalStateException("worker " + r + " still running after " + timeout
                            + "; all workers killed");
                }
                pumps.get(r).join(TimeUnit.SECONDS.toMillis(10));
                outcomes.add(new Outcome(r, p.exitValue(), results[r]));
            }
            return outcomes;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start worker process", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for workers", e);
        } finally {
            for (Process p : processes) {
                if (p.isAlive()) {
                    p.destroyForcibly();
                }
            }
        }
    }

    private static void pump(Process p, int rank, Consumer<String> output, String[] results) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (RankJvmOptions.isStartupNotice(line)) {
                    continue;
                }
                if (line.startsWith("RESULT ")) {
                    results[rank] = line;
                }
                output.accept("[rank " + rank + "] " + line);
            }
        } catch (IOException e) {
            output.accept("[rank " + rank + "] output lost: " + e);
        }
    }

    /** A TCP port free on loopback just now, for the rendezvous store. */
    public static int freeTcpPort() {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress("127.0.0.1", 0));
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free loopback TCP port", e);
        }
    }

    /**
     * A UDP port free just now on each of the workers' loopback addresses 127.0.0.2..P+1,
     * so the demo does not collide with anything else using the RoCE port 4791 here.
     */
    public static int freeDevicePort(int workers) {
        for (int attempt = 0; attempt < 20; attempt++) {
            int port;
            try (DatagramSocket first = new DatagramSocket(new InetSocketAddress("127.0.0.2", 0))) {
                port = first.getLocalPort();
            } catch (IOException e) {
                throw new UncheckedIOException("no free UDP port on 127.0.0.2", e);
            }
            if (freeOnAll(port, workers)) {
                return port;
            }
        }
        throw new IllegalStateException("no UDP port free on all of 127.0.0.2.." + (workers + 1) + " after 20 tries");
    }

    private static boolean freeOnAll(int port, int workers) {
        for (int r = 0; r < workers; r++) {
            try {
                new DatagramSocket(new InetSocketAddress("127.0.0." + (r + 2), port)).close();
            } catch (IOException e) {
                return false;
            }
        }
        return true;
    }
}
