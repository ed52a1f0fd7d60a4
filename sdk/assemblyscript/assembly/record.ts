/**
 * The header naming the output of its step that an output record goes to
 * (ABI.md, "Named outputs"); Record.toOutput sets it.
 */
// @lazy: asc would otherwise put the string into every module, used or not.
// @ts-ignore: decorator
@lazy export const HEADER_OUTPUT = "eddy.output";

/**
 * A record header: a name and a value. A null value is a Kafka null header
 * value, which is not the same as an empty one.
 */
export class Header {
  constructor(
    /** The header's name. */
    public key: string,
    /** The header's value; null is a null value. */
    public value: Uint8Array | null = null,
  ) {}

  /** Returns a copy that owns its bytes. */
  clone(): Header {
    return new Header(this.key, cloneBytes(this.value));
  }
}

/**
 * A Kafka-style record: the input and output of every handler.
 *
 * A null key or value is a Kafka null, which is not the same as an empty
 * array; the SDK keeps the difference in both directions.
 *
 * # Lifetime of input records
 *
 * The record object handed to a handler, its `key` and `value` arrays and its
 * headers are views into the host's input buffer, and the SDK reuses all of
 * them for the next record. They are valid only until the handler returns:
 * a handler that keeps any of them (in a global, a cache) must keep
 * `record.clone()` (or `value.slice()`) instead. The views must not be
 * written to: build a changed value in a new or reused array.
 *
 * Returning the input record, changed or not, is fine: the SDK encodes a
 * handler's result before it reads the next record.
 */
export class Record {
  constructor(
    /** The record key; null is a null key. */
    public key: Uint8Array | null = null,
    /** The record value; null is a null value (a tombstone). */
    public value: Uint8Array | null = null,
    /**
     * Milliseconds since the Unix epoch, UTC. An output record whose
     * timestamp equals its input record's keeps the input's timestamp; note
     * that a new Record has timestamp 0 unless you copy the input's.
     */
    public timestamp: i64 = 0,
    /**
     * The headers, in order; null (or empty) is none. An output record
     * carries exactly the headers it holds: returning the input record keeps
     * its headers, and setting headers to null drops them.
     */
    public headers: Header[] | null = null,
  ) {}

  /** Returns the value of the first header called key, or null if there is none (or its value is null). */
  header(key: string): Uint8Array | null {
    let hs = this.headers;
    if (hs == null) return null;
    for (let i = 0, n = hs.length; i < n; i++) {
      let h = unchecked(hs[i]);
      if (h.key == key) return h.value;
    }
    return null;
  }

  /** Appends a header (creating the header list if there is none) and returns the record. */
  addHeader(key: string, value: Uint8Array | null): Record {
    let hs = this.headers;
    if (hs == null) {
      hs = [];
      this.headers = hs;
    }
    hs.push(new Header(key, value));
    return this;
  }

  /**
   * Returns the record sent to the named output of its step (ABI.md, "Named
   * outputs"): the pipeline file gives a map, filter or flat_map step its
   * outputs (`outputs: [name, ...]`), and later steps read one as
   * `<step>.<name>`. A record sent to no output stays the step's own output;
   * one sent to a name the step does not have is dead-lettered. The host
   * takes the header off before the record goes on.
   *
   * The result is a new Record with this record's key, value and timestamp
   * and a new header list: this record's headers without any earlier
   * HEADER_OUTPUT header, then `eddy.output: name`. This record and its
   * header list are not changed, so a flatMap may send one record to
   * several outputs. The result shares the key, value and headers' bytes,
   * views of the input that are valid until the handler returns.
   */
  toOutput(name: string): Record {
    let hs = this.headers;
    let n = hs == null ? 0 : hs.length;
    let out: Header[] = [];
    for (let i = 0; i < n; i++) {
      let h = unchecked(hs![i]);
      if (h.key != HEADER_OUTPUT) out.push(h);
    }
    out.push(new Header(HEADER_OUTPUT, Uint8Array.wrap(String.UTF8.encode(name))));
    return new Record(this.key, this.value, this.timestamp, out);
  }

  /** Returns a deep copy of the record that owns all its bytes, so it stays valid after the handler returns. Null and empty arrays are kept apart. */
  clone(): Record {
    let c = new Record(cloneBytes(this.key), cloneBytes(this.value), this.timestamp);
    let hs = this.headers;
    if (hs != null) {
      let n = hs.length;
      let ch = new Array<Header>(n);
      for (let i = 0; i < n; i++) unchecked(ch[i] = unchecked(hs[i]).clone());
      c.headers = ch;
    }
    return c;
  }
}

/** Copies b, keeping null as null and empty as empty. */
export function cloneBytes(b: Uint8Array | null): Uint8Array | null {
  if (b == null) return null;
  return b.slice();
}
