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
  data: NpyData;
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
  override name = "NpyError";
}

/**
 * Parses `.npy` bytes. Supports little-endian (or byte-order-free) f4, f8,
 * i1–i8, u1–u4 and b1; throws {@linkcode NpyError} on Fortran order, other
 * dtypes, big-endian data or a truncated file.
 */
export function parseNpy(bytes: Uint8Array, name = "array"): NpyArray {
  if (bytes.length < 10 || !MAGIC.every((b, i) => bytes[i] === b)) {
    throw new NpyError(`${name}: not an .npy file (missing \\x93NUMPY magic)`);
  }
  const major = bytes[6];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  const headerStart = major === 1 ? 10 : 12;
  if (headerStart + headerLength > bytes.length) {
    throw new NpyError(`${name}: truncated header`);
  }
  const header = new TextDecoder(major === 3 ? "utf-8" : "latin1").decode(
    bytes.subarray(headerStart, headerStart + headerLength),
  );
  const descr = /'descr':\s*'([^']*)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(header)?.[1];
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (descr === undefined || fortran === undefined || shapeText === undefined) {
    throw new NpyError(`${name}: malformed header ${JSON.stringify(header.trim())}`);
  }
  if (fortran === "True") {
    throw new NpyError(`${name}: Fortran-order arrays are not supported; save with np.ascontiguousarray`);
  }
  const byteOrder = descr[0];
  const dtype = descr.slice(1);
  const ctor = DTYPES[dtype];
  if (!ctor || !"<|=".includes(byteOrder)) {
    throw new NpyError(
      `${name}: dtype '${descr}' is not supported; use one of ${Object.keys(DTYPES).map((d) => `<${d}`).join(", ")}`,
    );
  }
  const shape = shapeText.split(",").map((s) => s.trim()).filter((s) => s.length > 0).map(Number);
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
