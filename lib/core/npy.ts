/**
 * NumPy `.npy` reading and writing (format versions 1.0–3.0, C order), the
 * format researchers exchange arrays in.
 *
 * @module
 */

/** Typed arrays an `.npy` file maps to. */
export type NpyData =
  | Float32Array
  | Float64Array
  | Int8Array
  | Int16Array
  | Int32Array
  | BigInt64Array
  | Uint8Array
  | Uint16Array
  | Uint32Array;

/** An n-dimensional array: flat C-order data plus its shape. */
export interface NpyArray {
  /** The values, flat in C order. */
  data: NpyData;
  /** The array's shape. */
  shape: number[];
  /** NumPy dtype without byte order, e.g. "f4", "i8", "b1". */
  dtype: string;
}

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY

type Ctor = { new (buffer: ArrayBuffer): NpyData; BYTES_PER_ELEMENT: number };
const DTYPES: Record<string, Ctor> = {
  f4: Float32Array,
  f8: Float64Array,
  i1: Int8Array,
  i2: Int16Array,
  i4: Int32Array,
  i8: BigInt64Array,
  u1: Uint8Array,
  u2: Uint16Array,
  u4: Uint32Array,
  b1: Uint8Array,
};

/** Error for an unreadable or unsupported `.npy` payload. */
export class NpyError extends Error {
  /** Printed in place of "Error" in traces and logs. */
  override name = "NpyError";
}

type HeaderValue = string | boolean | number[];

/**
 * Reads the header dict of an `.npy` file, a Python literal such as
 * `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`, as
 * numpy's `ast.literal_eval` reads it: a key given twice takes its last value.
 * Values are strings, True/False and tuples of integers (Python 2 files may
 * write `3L`); anything else throws {@linkcode NpyError}.
 */
function parseHeaderDict(header: string, name: string): Map<string, HeaderValue> {
  function malformed(why: string): never {
    throw new NpyError(`${name}: malformed header (${why}): ${JSON.stringify(header.trim())}`);
  }
  let at = 0;
  const space = () => {
    while (at < header.length && /\s/.test(header[at])) at++;
  };
  const expect = (char: string) => {
    space();
    if (header[at] !== char) malformed(`expected ${char} at ${at}`);
    at++;
  };
  const string = (): string => {
    space();
    const quote = header[at];
    if (quote !== "'" && quote !== '"') malformed(`expected a quoted string at ${at}`);
    const end = header.indexOf(quote, at + 1);
    if (end < 0) malformed("unterminated string");
    const text = header.slice(at + 1, end);
    if (text.includes("\\")) malformed("escapes in strings are not supported");
    at = end + 1;
    return text;
  };
  const value = (): HeaderValue => {
    space();
    const char = header[at];
    if (char === "'" || char === '"') return string();
    const word = /^(True|False)\b/.exec(header.slice(at))?.[1];
    if (word !== undefined) {
      at += word.length;
      return word === "True";
    }
    if (char === "[") throw new NpyError(`${name}: structured dtypes (a descr list) are not supported`);
    if (char !== "(") malformed(`unsupported value at ${at}`);
    at++;
    const items: number[] = [];
    let commas = 0;
    for (;;) {
      space();
      if (header[at] === ")") break;
      const item = /^[+-]?\d+L?/.exec(header.slice(at))?.[0];
      if (item === undefined) malformed(`a shape holds integers, found ${JSON.stringify(header.slice(at, at + 8))}`);
      items.push(Number(item.replace(/L$/, "")));
      at += item.length;
      space();
      if (header[at] === ",") {
        at++;
        commas++;
      } else if (header[at] !== ")") malformed(`expected , or ) at ${at}`);
    }
    at++;
    // (3) is the number 3 in Python, not a tuple (numpy refuses it); numpy writes (3,).
    if (items.length === 1 && commas === 0) malformed("a one-dimensional shape is written (n,)");
    return items;
  };
  const dict = new Map<string, HeaderValue>();
  expect("{");
  for (;;) {
    space();
    if (header[at] === "}") break;
    const key = string();
    expect(":");
    dict.set(key, value());
    space();
    if (header[at] === ",") at++;
    else if (header[at] !== "}") malformed(`expected , or } at ${at}`);
  }
  at++;
  space();
  if (at !== header.length) malformed(`text after the dict at ${at}`);
  return dict;
}

/**
 * Parses `.npy` bytes. Supports little-endian (or byte-order-free) f4, f8,
 * i1–i8, u1–u4 and b1; throws {@linkcode NpyError} on Fortran order, other
 * dtypes, big-endian data, a header numpy would refuse (keys other than
 * descr, fortran_order and shape; a negative dimension) or a truncated file.
 * A header key given twice takes its last value, as numpy reads it.
 */
export function parseNpy(bytes: Uint8Array, name = "array"): NpyArray {
  if (bytes.length < 10 || !MAGIC.every((b, i) => bytes[i] === b)) {
    throw new NpyError(`${name}: not an .npy file (missing \\x93NUMPY magic)`);
  }
  const major = bytes[6];
  if (major < 1 || major > 3) throw new NpyError(`${name}: .npy format version ${major} is not supported (1–3 are)`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerStart = major === 1 ? 10 : 12;
  if (bytes.length < headerStart) throw new NpyError(`${name}: truncated header`);
  const headerLength = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  if (headerStart + headerLength > bytes.length) {
    throw new NpyError(`${name}: truncated header`);
  }
  const header = new TextDecoder(major === 3 ? "utf-8" : "latin1").decode(
    bytes.subarray(headerStart, headerStart + headerLength),
  );
  const dict = parseHeaderDict(header, name);
  const keys = [...dict.keys()].sort();
  if (keys.join() !== "descr,fortran_order,shape") {
    throw new NpyError(
      `${name}: the header has keys ${keys.join(", ") || "none"}; an .npy header has descr, fortran_order and shape`,
    );
  }
  const descr = dict.get("descr"), fortran = dict.get("fortran_order"), shape = dict.get("shape");
  if (typeof descr !== "string") throw new NpyError(`${name}: descr ${JSON.stringify(descr)} is not a dtype string`);
  if (typeof fortran !== "boolean") throw new NpyError(`${name}: fortran_order must be True or False`);
  if (!Array.isArray(shape)) throw new NpyError(`${name}: shape must be a tuple of integers`);
  if (fortran) {
    throw new NpyError(`${name}: Fortran-order arrays are not supported; save with np.ascontiguousarray`);
  }
  const byteOrder = descr[0];
  const dtype = descr.slice(1);
  const ctor = Object.hasOwn(DTYPES, dtype) ? DTYPES[dtype] : undefined;
  if (!ctor || !"<|=".includes(byteOrder)) {
    throw new NpyError(
      `${name}: dtype '${descr}' is not supported; use one of ${Object.keys(DTYPES).map((d) => `<${d}`).join(", ")}`,
    );
  }
  if (shape.some((d) => !Number.isSafeInteger(d) || d < 0)) {
    throw new NpyError(`${name}: shape (${shape.join(", ")}) has a negative or oversized dimension`);
  }
  const count = shape.reduce((a, b) => a * b, 1);
  const dataStart = headerStart + headerLength;
  const byteCount = count * ctor.BYTES_PER_ELEMENT;
  if (dataStart + byteCount > bytes.length) {
    throw new NpyError(
      `${name}: truncated data (expected ${byteCount} bytes for shape [${shape}], found ${bytes.length - dataStart})`,
    );
  }
  const copy = bytes.slice(dataStart, dataStart + byteCount).buffer;
  return { data: new ctor(copy), shape, dtype };
}

function dtypeOf(data: NpyData, bool: boolean): string {
  if (bool) return "b1";
  const entry = Object.entries(DTYPES).find(([key, ctor]) => key !== "b1" && data instanceof ctor);
  if (!entry) throw new NpyError(`unsupported typed array ${data.constructor.name}`);
  return entry[0];
}

/**
 * Serialises an array as `.npy` version 1.0 bytes. Pass `bool: true` to store
 * a Uint8Array of 0/1 as NumPy bool.
 */
export function formatNpy(data: NpyData, shape: number[], options: { bool?: boolean } = {}): Uint8Array {
  const count = shape.reduce((a, b) => a * b, 1);
  if (count !== data.length) {
    throw new NpyError(`shape [${shape}] holds ${count} values but the data has ${data.length}`);
  }
  const dtype = dtypeOf(data, options.bool ?? false);
  const byteOrder = dtype.endsWith("1") ? "|" : "<";
  const shapeText = shape.length === 1 ? `${shape[0]},` : shape.join(", ");
  let header = `{'descr': '${byteOrder}${dtype}', 'fortran_order': False, 'shape': (${shapeText}), }`;
  // Header plus magic and length is padded with spaces to a multiple of 64 bytes, ending in \n.
  const unpadded = 10 + header.length + 1;
  header += " ".repeat((64 - (unpadded % 64)) % 64) + "\n";
  const out = new Uint8Array(10 + header.length + data.byteLength);
  out.set(MAGIC, 0);
  out[6] = 1;
  out[7] = 0;
  new DataView(out.buffer).setUint16(8, header.length, true);
  out.set(new TextEncoder().encode(header), 10);
  out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), 10 + header.length);
  return out;
}

/** Reads an `.npy` file. */
export async function readNpy(path: string): Promise<NpyArray> {
  return parseNpy(await Deno.readFile(path), path);
}
