// RandomVectors prints test vectors of java.util.Random and java.lang.Math
// for the Go port in nexmark/internal/javarand. Run it with the JDK's
// single-file launcher (JDK 11 or later) from the repository root:
//
//	java testdata/nexmark/RandomVectors.java > testdata/nexmark/random_vectors.txt
//
// Each line is "seed op arg result": the calls on one seed are made in order
// on one java.util.Random, so a port must reproduce the whole sequence.
// Doubles are printed as the hex of their IEEE 754 bits. The "price" op is
// the Nexmark price rule Math.round(Math.pow(10.0, nextDouble() * 6.0) * 100.0),
// and "prices" a checksum of the first price drawn from each seed in a range
// (arg is "from:to"), to cover Math.pow over many values.
import java.util.Random;

public class RandomVectors {
    static final long[] SEEDS = {
        0L, 1L, -1L, 42L, 1000L, 1049L, 123456789L, -987654321L,
        1436918400000L, 0x5DEECE66DL, Long.MAX_VALUE, Long.MIN_VALUE,
    };
    static final int[] BOUNDS = {
        1, 2, 3, 4, 5, 6, 9, 10, 11, 13, 26, 100, 110, 1000, 1010, 10000,
        1 << 30, (1 << 30) + 1, Integer.MAX_VALUE,
    };

    public static void main(String[] args) {
        StringBuilder out = new StringBuilder();
        for (long seed : SEEDS) {
            Random r = new Random(seed);
            for (int i = 0; i < 4; i++) {
                line(out, seed, "int", "-", Integer.toString(r.nextInt()));
            }
            for (int bound : BOUNDS) {
                for (int i = 0; i < 3; i++) {
                    line(out, seed, "intn", Integer.toString(bound), Integer.toString(r.nextInt(bound)));
                }
            }
            for (int i = 0; i < 4; i++) {
                line(out, seed, "long", "-", Long.toString(r.nextLong()));
            }
            for (int i = 0; i < 4; i++) {
                line(out, seed, "double", "-", Long.toHexString(Double.doubleToRawLongBits(r.nextDouble())));
            }
            for (int i = 0; i < 8; i++) {
                line(out, seed, "bool", "-", Boolean.toString(r.nextBoolean()));
            }
            for (int i = 0; i < 8; i++) {
                line(out, seed, "price", "-", Long.toString(price(r)));
            }
        }
        // Math.round edge cases, as "round" lines with seed 0.
        double[] xs = {
            0.0, 0.49999999999999994, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 1e15 + 0.5,
            4503599627370497.0, 9.3e18, -9.3e18, Double.NaN, 12.3 * 0.2, 168.0 * 0.2,
        };
        for (double x : xs) {
            line(out, 0, "round", Long.toHexString(Double.doubleToRawLongBits(x)), Long.toString(Math.round(x)));
        }
        // A checksum of the first price of many seeds (a Nexmark event's
        // Random is seeded with its event id).
        long from = 0, to = 200000, sum = 0;
        for (long seed = from; seed < to; seed++) {
            sum = sum * 31 + price(new Random(seed));
        }
        line(out, 0, "prices", from + ":" + to, Long.toString(sum));
        System.out.print(out);
    }

    static long price(Random r) {
        return Math.round(Math.pow(10.0, r.nextDouble() * 6.0) * 100.0);
    }

    static void line(StringBuilder out, long seed, String op, String arg, String result) {
        out.append(seed).append(' ').append(op).append(' ').append(arg).append(' ').append(result).append('\n');
    }
}
