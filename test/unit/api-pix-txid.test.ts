import { describe, expect, it } from 'vitest';
import { fromApiPixTxid, returnIdFor, toApiPixTxid } from '../../connectors/api-pix/txid';
import { cobTxidPattern, returnIdPattern } from '../../connectors/api-pix/wire/schemas';

describe('API Pix txid mapping', () => {
  it('maps every pixflow txid length to the spec pattern and back', () => {
    for (let length = 1; length <= 33; length += 1) {
      const txid = Array.from({ length }, (_, i) => String((i * 7 + length) % 10)).join('');
      const mapped = toApiPixTxid(txid);
      expect(mapped).toMatch(cobTxidPattern);
      expect(mapped).toHaveLength(35);
      expect(fromApiPixTxid(mapped)).toBe(txid);
    }
  });

  it('keeps leading zeros apart: 7, 07 and 007 are three charges', () => {
    const mapped = ['7', '07', '007'].map(toApiPixTxid);
    expect(new Set(mapped).size).toBe(3);
    expect(mapped.map(fromApiPixTxid)).toEqual(['7', '07', '007']);
  });

  it('is deterministic', () => {
    expect(toApiPixTxid('1732000000123')).toBe(toApiPixTxid('1732000000123'));
    expect(toApiPixTxid('1732000000123')).toBe('PFXXXXXXXXXXXXXXXXXXXX1732000000123');
  });

  it('refuses what is not a pixflow txid', () => {
    for (const bad of ['', 'abc', '12a', '1'.repeat(34), ' 12']) {
      expect(() => toApiPixTxid(bad)).toThrow(RangeError);
    }
  });

  it('reads no pixflow txid from another system charge', () => {
    for (const other of [
      '655dfdb1a4514b8fbb58254b958913fb',
      'PFXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX',
      'PFXXXXXXXXXXXXXXXXXXXX1732000000123A',
      'PFXXXXXXXXXXXXXXXXXXXX173200000012',
      'QFXXXXXXXXXXXXXXXXXXXX1732000000123',
    ]) {
      expect(fromApiPixTxid(other)).toBeUndefined();
    }
  });
});

describe('returnIdFor', () => {
  it('builds ids the spec takes, one per deposit and return number', () => {
    const ids = new Set<string>();
    for (const txid of ['1', '12', '123', '1'.repeat(33)]) {
      for (const n of [1, 2, 9]) {
        const id = returnIdFor(txid, n);
        expect(id).toMatch(returnIdPattern);
        ids.add(id);
      }
    }
    expect(ids.size).toBe(12);
    expect(returnIdFor('12', 1)).not.toBe(returnIdFor('1', 21));
    expect(returnIdFor('123')).toBe(returnIdFor('123', 1));
  });

  it('refuses a return number or txid that cannot make a valid id', () => {
    expect(() => returnIdFor('1'.repeat(33), 10)).toThrow(/35 characters/);
    expect(() => returnIdFor('123', 0)).toThrow(RangeError);
    expect(() => returnIdFor('123', 1.5)).toThrow(RangeError);
    expect(() => returnIdFor('12a')).toThrow(RangeError);
  });
});
