package io.netreduce.sim.engine;

import java.util.ArrayList;
import java.util.List;

/**
 * The links a flow group crosses, each with a weight: the number of the group's flows that
 * cross <em>one instance</em> of that link. For a plain flow every weight is 1. For a group of
 * k symmetric flows (say one per machine) whose link class has one instance per machine the
 * weight is 1; for a class with a single shared instance (say a switch port all k flows
 * enter) the weight is k. Max-min sharing then counts weight flows per link instance.
 *
 * <p>The route's latency is the sum of its links' latencies: a flow's last byte arrives that
 * long after it leaves the sender.
 */
public final class Route {

    private final Link[] links;
    private final int[] weights;
    private final double latency;

    private Route(Link[] links, int[] weights) {
        this.links = links;
        this.weights = weights;
        double sum = 0;
        for (Link l : links) {
            sum += l.latency();
        }
        this.latency = sum;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A route crossing each given link with weight 1. */
    public static Route of(Link... links) {
        Builder b = builder();
        for (Link l : links) {
            b.via(l, 1);
        }
        return b.build();
    }

    public int hops() {
        return links.length;
    }

    public Link link(int i) {
        return links[i];
    }

    public int weight(int i) {
        return weights[i];
    }

    public double latency() {
        return latency;
    }

    /** Collects (link, weight) pairs in path order. */
    public static final class Builder {
        private final List<Link> links = new ArrayList<>();
        private final List<Integer> weights = new ArrayList<>();

        public Builder via(Link link, int weight) {
            if (link == null) {
                throw new IllegalArgumentException("route link must not be null (hop " + links.size() + ")");
            }
            if (weight < 1) {
                throw new IllegalArgumentException("route weight on link '" + link.name() + "' must be >= 1, got " + weight);
            }
            if (links.contains(link)) {
                throw new IllegalArgumentException("route crosses link '" + link.name() + "' twice; give the two crossings separate links or add the weights");
            }
            links.add(link);
            weights.add(weight);
            return this;
        }

        public Route build() {
            int[] w = new int[weights.size()];
            for (int i = 0; i < w.length; i++) {
                w[i] = weights.get(i);
            }
            return new Route(links.toArray(new Link[0]), w);
        }
    }
}
