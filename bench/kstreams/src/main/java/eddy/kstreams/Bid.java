package eddy.kstreams;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * A Nexmark bid as {@code eddy bench nexmark gen} writes it: a flat JSON
 * object {"auction","bidder","price","channel","url","dateTime","extra"}.
 * Read and written with Jackson's streaming parser and generator.
 */
final class Bid {
    static final JsonFactory JSON = new JsonFactory();

    long auction;
    long bidder;
    long price;
    String channel = "";
    String url = "";
    long dateTime;
    String extra = "";

    /** Parses a bid; fields it does not know are skipped. */
    static Bid parse(byte[] value) {
        try (JsonParser p = JSON.createParser(value)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new IllegalArgumentException("a bid is a JSON object");
            }
            Bid b = new Bid();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                p.nextToken();
                switch (name) {
                    case "auction" -> b.auction = p.getLongValue();
                    case "bidder" -> b.bidder = p.getLongValue();
                    case "price" -> b.price = p.getLongValue();
                    case "channel" -> b.channel = p.getText();
                    case "url" -> b.url = p.getText();
                    case "dateTime" -> b.dateTime = p.getLongValue();
                    case "extra" -> b.extra = p.getText();
                    default -> p.skipChildren();
                }
            }
            return b;
        } catch (IOException e) {
            throw new UncheckedIOException("not a bid", e);
        }
    }

    /**
     * Returns the integer member {@code name} of a flat JSON object, reading
     * only as far as it: what the windowed queries need to pick a key.
     */
    static long longField(byte[] value, String name) {
        try (JsonParser p = JSON.createParser(value)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new IllegalArgumentException("a bid is a JSON object");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                boolean match = name.equals(p.currentName());
                p.nextToken();
                if (match) {
                    return p.getLongValue();
                }
                p.skipChildren();
            }
            throw new IllegalArgumentException("no \"" + name + "\" in the bid");
        } catch (IOException e) {
            throw new UncheckedIOException("not a bid", e);
        }
    }

    /** Writes the bid in the generator's field order. */
    byte[] toJson() {
        ByteArrayOutputStream out = new ByteArrayOutputStream(sizeHint());
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeNumberField("auction", auction);
            g.writeNumberField("bidder", bidder);
            g.writeNumberField("price", price);
            g.writeStringField("channel", channel);
            g.writeStringField("url", url);
            g.writeNumberField("dateTime", dateTime);
            g.writeStringField("extra", extra);
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    private int sizeHint() {
        return 96 + channel.length() + url.length() + extra.length();
    }
}
