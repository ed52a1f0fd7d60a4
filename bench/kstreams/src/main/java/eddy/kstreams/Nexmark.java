package eddy.kstreams;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Suppressed;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.processor.api.FixedKeyProcessor;
import org.apache.kafka.streams.processor.api.FixedKeyProcessorContext;
import org.apache.kafka.streams.processor.api.FixedKeyRecord;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.WindowStore;

/**
 * Nexmark q1, q2, q5-counts, q7 and q12 on Kafka Streams, over the JSON bids that
 * {@code eddy bench nexmark gen} writes, with the semantics and the output
 * shapes of Eddy's pipelines (nexmark/nxbench/queries.go), so that the same
 * reference check verifies both:
 *
 * <ul>
 *   <li>q1: every bid, its price in euros (price*89/100);
 *   <li>q2: {"auction","price"} of the bids whose auction % 123 == 0;
 *   <li>q5-counts: bids counted per auction in hopping windows of 10 s every
 *       2 s, one {"count":N} per auction and window (q5's first half: the hot
 *       items, the most counted auctions of each window, are picked from
 *       them by the checker; Eddy's own q5 computes them in a second
 *       aggregate);
 *   <li>q7: per tumbling 10 s window, {"price":P,"bids":[...]}, the highest
 *       price and every bid at it;
 *   <li>q12: bids counted per bidder in tumbling 10 s windows of event time
 *       (Eddy's q12: event time, not processing time).
 * </ul>
 *
 * Windows are of the record timestamp, the event time. Window results are
 * final (suppressed until the window closes) and carry the headers
 * eddy.window.start and eddy.window.end, as Eddy's do. The windowed queries
 * repartition by their key through the topic APP-rekey-repartition, as
 * Eddy's pipelines do. The first processor of q1 and q2 stamps each record
 * with the header ks.read, the wall-clock ms at which it read it, for the
 * latency measurement.
 *
 * <p>Prints "RUNNING" on stdout each time the application enters the
 * RUNNING state, and stops on SIGTERM.
 */
public final class Nexmark {
    static final long WINDOW_MS = 10_000;
    static final long Q5_ADVANCE_MS = 2_000;

    public static void main(String[] args) throws Exception {
        Map<String, String> a = flags(args);
        String query = need(a, "query");
        String brokers = need(a, "brokers");
        String input = need(a, "input");
        String output = need(a, "output");
        String appId = need(a, "app-id");
        String guarantee = a.getOrDefault("guarantee", StreamsConfig.EXACTLY_ONCE_V2);
        int threads = Integer.parseInt(a.getOrDefault("threads",
                Integer.toString(Runtime.getRuntime().availableProcessors())));
        long graceMs = Long.parseLong(a.getOrDefault("grace-ms", "600000"));
        String stateDir = a.getOrDefault("state-dir",
                Files.createTempDirectory("ks-nexmark-").toString());

        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, guarantee);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, threads);
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
        p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");

        Topology topology = topology(query, input, output, Duration.ofMillis(graceMs));
        KafkaStreams streams = new KafkaStreams(topology, p);
        CountDownLatch done = new CountDownLatch(1);
        AtomicInteger status = new AtomicInteger();
        streams.setStateListener((now, before) -> {
            if (now == KafkaStreams.State.RUNNING) {
                System.out.println("RUNNING");
                System.out.flush();
            }
            if (now == KafkaStreams.State.ERROR) {
                status.set(1);
                done.countDown();
            }
            if (now == KafkaStreams.State.NOT_RUNNING) {
                done.countDown();
            }
        });
        streams.setUncaughtExceptionHandler(e -> {
            System.err.println("kstreams-nexmark: " + e);
            status.set(1);
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close(Duration.ofSeconds(20));
            done.countDown();
        }));
        streams.start();
        done.await();
        streams.close(Duration.ofSeconds(20));
        System.exit(status.get());
    }

    static Topology topology(String query, String input, String output, Duration grace) {
        StreamsBuilder b = new StreamsBuilder();
        KStream<byte[], byte[]> bids = b.stream(input, Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()));
        Produced<String, byte[]> out = Produced.with(Serdes.String(), Serdes.ByteArray());
        switch (query) {
            case "q1" -> bids.processValues(Q1::new).to(output, Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));
            case "q2" -> bids.processValues(Q2::new).to(output, Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));
            case "q5-counts" -> {
                TimeWindows w = TimeWindows.ofSizeAndGrace(Duration.ofMillis(WINDOW_MS), grace)
                        .advanceBy(Duration.ofMillis(Q5_ADVANCE_MS));
                countsOut(rekey(bids, "auction").windowedBy(w)
                        .count(Materialized.<String, Long, WindowStore<Bytes, byte[]>>as("counts")))
                        .to(output, out);
            }
            case "q12" -> {
                TimeWindows w = TimeWindows.ofSizeAndGrace(Duration.ofMillis(WINDOW_MS), grace);
                countsOut(rekey(bids, "bidder").windowedBy(w)
                        .count(Materialized.<String, Long, WindowStore<Bytes, byte[]>>as("counts")))
                        .to(output, out);
            }
            case "q7" -> {
                TimeWindows w = TimeWindows.ofSizeAndGrace(Duration.ofMillis(WINDOW_MS), grace);
                KGroupedStream<String, byte[]> all = bids.selectKey((k, v) -> "all")
                        .groupByKey(Grouped.with("rekey", Serdes.String(), Serdes.ByteArray()));
                all.windowedBy(w)
                        .aggregate(Highest::init, (k, v, acc) -> Highest.add(acc, Bid.parse(v)),
                                Materialized.<String, byte[], WindowStore<Bytes, byte[]>>as("highest")
                                        .withValueSerde(Serdes.ByteArray()))
                        .suppress(Suppressed.untilWindowCloses(Suppressed.BufferConfig.unbounded()))
                        .toStream()
                        .process(() -> new WindowOut<byte[]>(Highest::result))
                        .to(output, out);
            }
            default -> throw new IllegalArgumentException("no query " + query + "; the implemented ones: q1 q2 q5-counts q7 q12");
        }
        return b.build();
    }

    /** Keys the bids by an integer field, in decimal, through APP-rekey-repartition. */
    static KGroupedStream<String, byte[]> rekey(KStream<byte[], byte[]> bids, String field) {
        return bids.selectKey((k, v) -> Long.toString(Bid.longField(v, field)))
                .groupByKey(Grouped.with("rekey", Serdes.String(), Serdes.ByteArray()));
    }

    static KStream<String, byte[]> countsOut(KTable<Windowed<String>, Long> counts) {
        return counts.suppress(Suppressed.untilWindowCloses(Suppressed.BufferConfig.unbounded()))
                .toStream()
                .process(() -> new WindowOut<Long>(n -> ("{\"count\":" + n + "}").getBytes(StandardCharsets.UTF_8)));
    }

    static void stampRead(Headers h) {
        h.add("ks.read", Long.toString(System.currentTimeMillis()).getBytes(StandardCharsets.UTF_8));
    }

    /** q1: the bid, its price in euros. */
    static final class Q1 implements FixedKeyProcessor<byte[], byte[], byte[]> {
        private FixedKeyProcessorContext<byte[], byte[]> ctx;

        @Override
        public void init(FixedKeyProcessorContext<byte[], byte[]> ctx) {
            this.ctx = ctx;
        }

        @Override
        public void process(FixedKeyRecord<byte[], byte[]> r) {
            stampRead(r.headers());
            Bid bid = Bid.parse(r.value());
            bid.price = bid.price * 89 / 100;
            ctx.forward(r.withValue(bid.toJson()));
        }
    }

    /** q2: {"auction","price"} of the bids on every 123rd auction. */
    static final class Q2 implements FixedKeyProcessor<byte[], byte[], byte[]> {
        private FixedKeyProcessorContext<byte[], byte[]> ctx;

        @Override
        public void init(FixedKeyProcessorContext<byte[], byte[]> ctx) {
            this.ctx = ctx;
        }

        @Override
        public void process(FixedKeyRecord<byte[], byte[]> r) {
            stampRead(r.headers());
            Bid bid = Bid.parse(r.value());
            if (bid.auction % 123 != 0) {
                return;
            }
            String v = "{\"auction\":" + bid.auction + ",\"price\":" + bid.price + "}";
            ctx.forward(r.withValue(v.getBytes(StandardCharsets.UTF_8)));
        }
    }

    /** Turns a final window result into Eddy's shape: the plain key, the window in headers. */
    static final class WindowOut<V> implements Processor<Windowed<String>, V, String, byte[]> {
        interface Encoder<V> {
            byte[] encode(V v);
        }

        private final Encoder<V> encode;
        private ProcessorContext<String, byte[]> ctx;

        WindowOut(Encoder<V> encode) {
            this.encode = encode;
        }

        @Override
        public void init(ProcessorContext<String, byte[]> ctx) {
            this.ctx = ctx;
        }

        @Override
        public void process(Record<Windowed<String>, V> r) {
            byte[] v = encode.encode(r.value());
            if (v == null) {
                return;
            }
            Headers h = new RecordHeaders();
            h.add("eddy.window.start", Long.toString(r.key().window().start()).getBytes(StandardCharsets.UTF_8));
            h.add("eddy.window.end", Long.toString(r.key().window().end()).getBytes(StandardCharsets.UTF_8));
            ctx.forward(new Record<>(r.key().key(), v, r.timestamp(), h));
        }
    }

    /**
     * q7's accumulator: the highest price (8 bytes), then 24 bytes per bid at
     * it (auction, bidder, dateTime). Each update makes a new array, as the
     * aggregate's value is stored.
     */
    static final class Highest {
        static byte[] init() {
            return ByteBuffer.allocate(8).putLong(Long.MIN_VALUE).array();
        }

        static byte[] add(byte[] acc, Bid b) {
            long cur = ByteBuffer.wrap(acc).getLong(0);
            if (b.price < cur) {
                return acc;
            }
            ByteBuffer next;
            if (b.price > cur) {
                next = ByteBuffer.allocate(8 + 24).putLong(b.price);
            } else {
                next = ByteBuffer.allocate(acc.length + 24).put(acc);
            }
            return next.putLong(b.auction).putLong(b.bidder).putLong(b.dateTime).array();
        }

        static byte[] result(byte[] acc) {
            ByteBuffer in = ByteBuffer.wrap(acc);
            long price = in.getLong();
            List<long[]> bids = new ArrayList<>();
            while (in.remaining() >= 24) {
                bids.add(new long[] {in.getLong(), in.getLong(), in.getLong()});
            }
            if (bids.isEmpty()) {
                return null;
            }
            bids.sort(Comparator.<long[]>comparingLong(x -> x[2]).thenComparingLong(x -> x[0]).thenComparingLong(x -> x[1]));
            StringBuilder s = new StringBuilder("{\"price\":").append(price).append(",\"bids\":[");
            for (int i = 0; i < bids.size(); i++) {
                long[] x = bids.get(i);
                if (i > 0) {
                    s.append(',');
                }
                s.append("{\"auction\":").append(x[0]).append(",\"bidder\":").append(x[1])
                        .append(",\"dateTime\":").append(x[2]).append('}');
            }
            return s.append("]}").toString().getBytes(StandardCharsets.UTF_8);
        }
    }

    static Map<String, String> flags(String[] args) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                usage("bad argument " + args[i]);
            }
            m.put(args[i].substring(2), args[++i]);
        }
        return m;
    }

    static String need(Map<String, String> a, String k) {
        String v = a.get(k);
        if (v == null) {
            usage("--" + k + " is required");
        }
        return v;
    }

    static void usage(String why) {
        System.err.println("kstreams-nexmark: " + why + "\nusage: --query q1|q2|q5-counts|q7|q12 --brokers HOST:PORT --input TOPIC"
                + " --output TOPIC --app-id ID [--guarantee exactly_once_v2|at_least_once] [--threads N]"
                + " [--grace-ms MS] [--state-dir DIR]");
        System.exit(2);
    }
}
