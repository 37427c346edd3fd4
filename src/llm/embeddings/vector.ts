/**
 * Small vector helpers shared by the embedding providers and the vector
 * index. Vectors are Float32Array, L2-normalised, so cosine similarity is a
 * plain dot product.
 */

/** Scales `v` in place to unit length (a zero vector stays zero) and returns it. */
export function normalize(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i] * v[i];
  if (sum === 0) return v;
  const inv = 1 / Math.sqrt(sum);
  for (let i = 0; i < v.length; i++) v[i] *= inv;
  return v;
}

/** Dot product of two vectors of the same length (cosine for unit vectors). */
export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** The bytes stored in SQLite for a vector (a BLOB of little-endian float32). */
export function vectorToBlob(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

/** Reads a vector back from its BLOB; copies, so the result is aligned and owned. */
export function blobToVector(blob: Buffer): Float32Array {
  const out = new Float32Array(blob.byteLength / 4);
  Buffer.from(out.buffer).set(blob);
  return out;
}
