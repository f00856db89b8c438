/** .npy files built byte by byte, for tests of readers. */

/** An .npy file, version 1.0, with the header dict `header` verbatim (padded as NumPy pads it) and `payload` after it. */
export function npyWithHeader(header: string, payload: Uint8Array = new Uint8Array(80)): Uint8Array {
  header += " ".repeat((64 - ((10 + header.length + 1) % 64)) % 64) + "\n";
  const out = new Uint8Array(10 + header.length + payload.length);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
  new DataView(out.buffer).setUint16(8, header.length, true);
  out.set(new TextEncoder().encode(header), 10);
  out.set(payload, 10 + header.length);
  return out;
}
