import { assertEquals, assertThrows } from "../assert.ts";
import { formatNpy, NpyError, parseNpy } from "../../lib/core/npy.ts";
import { npyWithHeader } from "./npy_bytes.ts";

/** np.save of np.arange(6, dtype='<f4').reshape(2, 3): the header as NumPy writes it. */
function numpyBytes(descr: string, shape: string, fortran: string, payload: Uint8Array): Uint8Array {
  return npyWithHeader(`{'descr': '${descr}', 'fortran_order': ${fortran}, 'shape': ${shape}, }`, payload);
}

Deno.test("parseNpy reads a file laid out as NumPy writes it", () => {
  const values = Float32Array.from([0, 1, 2, 3, 4, 5]);
  const parsed = parseNpy(numpyBytes("<f4", "(2, 3)", "False", new Uint8Array(values.buffer)));
  assertEquals(parsed.shape, [2, 3]);
  assertEquals(parsed.dtype, "f4");
  assertEquals([...parsed.data], [0, 1, 2, 3, 4, 5]);
});

Deno.test("formatNpy and parseNpy round-trip every supported dtype", () => {
  const cases = [
    Float32Array.from([1.5, -2, 3]),
    Float64Array.from([1e-300, 2, -3]),
    Int32Array.from([-1, 0, 2147483647]),
    Uint8Array.from([0, 128, 255]),
    BigInt64Array.from([-5n, 0n, 9007199254740993n]),
    Int16Array.from([-300, 0, 300]),
  ];
  for (const data of cases) {
    const parsed = parseNpy(formatNpy(data, [3]));
    assertEquals(parsed.shape, [3]);
    assertEquals(parsed.data, data);
  }
  const bools = parseNpy(formatNpy(Uint8Array.from([1, 0, 1, 1]), [2, 2], { bool: true }));
  assertEquals(bools.dtype, "b1");
  assertEquals(bools.shape, [2, 2]);
  const scalar = parseNpy(formatNpy(Float32Array.from([7]), []));
  assertEquals(scalar.shape, []);
  assertEquals([...scalar.data], [7]);
});

Deno.test("formatNpy headers are 64-byte aligned", () => {
  const bytes = formatNpy(Float32Array.from([1, 2]), [2]);
  const headerLength = new DataView(bytes.buffer).getUint16(8, true);
  assertEquals((10 + headerLength) % 64, 0);
  assertEquals(bytes[10 + headerLength - 1], 0x0a);
});

Deno.test("parseNpy refuses Fortran order, unsupported dtypes, big-endian and truncation", () => {
  const four = new Uint8Array(16);
  assertThrows(() => parseNpy(numpyBytes("<f4", "(2, 2)", "True", four)), NpyError, "Fortran");
  assertThrows(() => parseNpy(numpyBytes("<c8", "(2,)", "False", four)), NpyError, "'<c8' is not supported");
  assertThrows(() => parseNpy(numpyBytes(">f4", "(2,)", "False", four)), NpyError, "not supported");
  assertThrows(
    () => parseNpy(numpyBytes("<f4", "(8,)", "False", four), "codes.npy"),
    NpyError,
    "codes.npy: truncated data",
  );
  assertThrows(() => parseNpy(new Uint8Array([1, 2, 3])), NpyError, "not an .npy file");
});

Deno.test("parseNpy reads a repeated header key as numpy does: the last value counts", () => {
  // numpy's header is a Python dict literal (ast.literal_eval): {'fortran_order': False, 'fortran_order': True} is True.
  assertThrows(
    () => parseNpy(npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'fortran_order': True, }")),
    NpyError,
    "Fortran",
  );
  const last = parseNpy(
    npyWithHeader("{'descr': '<f4', 'fortran_order': True, 'shape': (3,), 'fortran_order': False}"),
  );
  assertEquals(last.shape, [3]);
  const shape = parseNpy(npyWithHeader("{'shape': (9,), 'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }"));
  assertEquals(shape.shape, [2, 2]);
  // Python 2 writers put longs in the shape, and double quotes are a Python string too.
  assertEquals(parseNpy(npyWithHeader(`{"descr": "<f4", "fortran_order": False, "shape": (2L, 3L)}`)).shape, [2, 3]);
});

Deno.test("parseNpy refuses headers numpy refuses: negative or non-numeric dimensions, other keys, (3) for (3,)", () => {
  const cases: [string, string][] = [
    ["{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 2), }", "negative"],
    ["{'descr': '<f4', 'fortran_order': False, 'shape': (a, 2), }", "a shape holds integers"],
    ["{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,), }", "expected , or )"],
    ["{'descr': '<f4', 'fortran_order': False, 'shape': (3), }", "(n,)"],
    ["{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1, }", "unsupported value"],
    ["{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 'y'}", "keys descr, fortran_order, shape, x"],
    ["{'descr': '<f4', 'shape': (2,)}", "keys descr, shape"],
    ["{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", "unsupported value"],
    ["{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}", "structured dtypes"],
    ["{'descr': '<constructor', 'fortran_order': False, 'shape': (2,)}", "not supported"],
    ["{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} trailing", "text after the dict"],
    ["not a dict", "malformed header"],
  ];
  for (const [header, message] of cases) {
    assertThrows(() => parseNpy(npyWithHeader(header), "x.npy"), NpyError, message);
  }
  const version9 = npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}");
  version9[6] = 9;
  assertThrows(() => parseNpy(version9), NpyError, "format version 9 is not supported");
  assertThrows(
    () => parseNpy(Uint8Array.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 2, 0, 1, 0])),
    NpyError,
    "truncated",
  );
});
