import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../kernels/common/random';
import { sha256Hex } from './sha256';

describe('sha256Hex', () => {
  it('gives the FIPS 180-4 test vectors', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
  });

  it("equals node:crypto's on UTF-8 texts of every length across the padding boundaries", () => {
    const rand = mulberry32(7);
    const alphabet = 'ab\n€😀é';
    for (let n = 0; n < 200; n++) {
      const text = Array.from({ length: n }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
      expect(sha256Hex(text), `length ${n}`).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
    }
  });
});
