package io.netreduce.sim.study;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** A small table of strings: written as CSV for tools and as aligned text or Markdown for people. */
public final class Table {

    private final List<String> header;
    private final List<List<String>> rows = new ArrayList<>();

    public Table(String... header) {
        this.header = List.of(header);
    }

    public Table add(Object... cells) {
        if (cells.length != header.size()) {
            throw new IllegalArgumentException("row has " + cells.length + " cells, table " + header + " has " + header.size() + " columns");
        }
        List<String> row = new ArrayList<>(cells.length);
        for (Object c : cells) {
            row.add(String.valueOf(c));
        }
        rows.add(row);
        return this;
    }

    public List<String> header() {
        return header;
    }

    public List<List<String>> rows() {
        return Collections.unmodifiableList(rows);
    }

    public void writeCsv(Path file) throws IOException {
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            w.write(csvLine(header));
            for (List<String> r : rows) {
                w.write(csvLine(r));
            }
        }
    }

    private static String csvLine(List<String> cells) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < cells.size(); i++) {
            if (i > 0) {
                sb.append(',');
            }
            String c = cells.get(i);
            if (c.indexOf(',') >= 0 || c.indexOf('"') >= 0 || c.indexOf('\n') >= 0) {
                sb.append('"').append(c.replace("\"", "\"\"")).append('"');
            } else {
                sb.append(c);
            }
        }
        return sb.append('\n').toString();
    }

    /** Columns padded to their widest cell. */
    public String toText() {
        int[] width = new int[header.size()];
        for (int i = 0; i < width.length; i++) {
            width[i] = header.get(i).length();
            for (List<String> r : rows) {
                width[i] = Math.max(width[i], r.get(i).length());
            }
        }
        StringBuilder sb = new StringBuilder();
        appendPadded(sb, header, width);
        for (int i = 0; i < width.length; i++) {
            sb.append(i == 0 ? "" : "  ").append("-".repeat(width[i]));
        }
        sb.append('\n');
        for (List<String> r : rows) {
            appendPadded(sb, r, width);
        }
        return sb.toString();
    }

    private static void appendPadded(StringBuilder sb, List<String> cells, int[] width) {
        for (int i = 0; i < cells.size(); i++) {
            String c = cells.get(i);
            sb.append(i == 0 ? "" : "  ").append(c);
            if (i < cells.size() - 1) {
                sb.append(" ".repeat(width[i] - c.length()));
            }
        }
        sb.append('\n');
    }

    public String toMarkdown() {
        StringBuilder sb = new StringBuilder("| ").append(String.join(" | ", header)).append(" |\n|");
        sb.append("---|".repeat(header.size())).append('\n');
        for (List<String> r : rows) {
            sb.append("| ").append(String.join(" | ", r).replace("\n", " ")).append(" |\n");
        }
        return sb.toString();
    }
}
