package io.netreduce.cli.probe;

import io.netreduce.cli.CliException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The probe's out-of-band channel (perftest uses one too): a TCP connection carrying text
 * lines {@code VERB key=value ...}, used to exchange queue-pair endpoints, memory keys and
 * per-size start/stop handshakes. Every read has a deadline.
 */
final class SideChannel implements AutoCloseable {
    private final Socket socket;
    private final BufferedReader in;
    private final Writer out;

    SideChannel(Socket socket, Duration timeout) throws IOException {
        this.socket = socket;
        socket.setTcpNoDelay(true);
        socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, timeout.toMillis()));
        this.in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
        this.out = new OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8);
    }

    void send(String verb, Object... keyValues) throws IOException {
        StringBuilder sb = new StringBuilder(verb);
        for (int i = 0; i + 1 < keyValues.length; i += 2) {
            sb.append(' ').append(keyValues[i]).append('=').append(keyValues[i + 1]);
        }
        out.write(sb.append('\n').toString());
        out.flush();
    }

    /** Reads the next line and checks its verb; an ERROR line from the peer becomes our failure. */
    Message expect(String verb) throws IOException {
        return expectAny(verb);
    }

    /** Reads the next line, which must carry one of {@code verbs}. */
    Message expectAny(String... verbs) throws IOException {
        String verb = String.join(" or ", verbs);
        String line;
        try {
            line = in.readLine();
        } catch (SocketTimeoutException e) {
            throw new CliException("the peer sent nothing within " + socket.getSoTimeout() / 1000 + " s (waiting for "
                    + verb + ")", e);
        }
        if (line == null) {
            throw new CliException("the peer closed the side channel (waiting for " + verb + ")");
        }
        Message m = Message.parse(line);
        if (m.verb().equals("ERROR")) {
            throw new CliException("the peer reported: " + line.substring("ERROR".length()).trim());
        }
        if (!java.util.Arrays.asList(verbs).contains(m.verb())) {
            throw new CliException("protocol error on the side channel: expected " + verb + ", got '" + line + "'");
        }
        return m;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }

    /** One parsed line. */
    record Message(String verb, Map<String, String> fields) {
        static Message parse(String line) {
            String[] parts = line.trim().split(" ");
            Map<String, String> fields = new LinkedHashMap<>();
            for (int i = 1; i < parts.length; i++) {
                int eq = parts[i].indexOf('=');
                if (eq > 0) {
                    fields.put(parts[i].substring(0, eq), parts[i].substring(eq + 1));
                }
            }
            return new Message(parts[0], fields);
        }

        String get(String key) {
            String v = fields.get(key);
            if (v == null) {
                throw new CliException("protocol error on the side channel: '" + verb + "' lacks " + key);
            }
            return v;
        }

        long getLong(String key) {
            try {
                return Long.parseLong(get(key));
            } catch (NumberFormatException e) {
                throw new CliException("protocol error on the side channel: " + key + "=" + fields.get(key));
            }
        }

        int getInt(String key) {
            return Math.toIntExact(getLong(key));
        }
    }
}
