import { describe, expect, it } from 'vitest';
import { ApiError, ERROR_HANDLING, errorCode, errorText } from './errors';
import { ERROR_CODE_VALUES } from './protocol';

describe('errors across the window boundary', () => {
  it('handles every code the backend can return (ERROR_CODE_VALUES is generated from backend.ErrorCode)', () => {
    expect(ERROR_CODE_VALUES.length).toBeGreaterThan(10);
    for (const code of ERROR_CODE_VALUES) {
      const h = ERROR_HANDLING[code];
      expect(h, code).toBeDefined();
      expect(h.title, code).not.toBe('');
      expect(['show', 'refresh', 'retry', 'settings'], code).toContain(h.action);
    }
    // Nothing handled that Go does not declare.
    expect(Object.keys(ERROR_HANDLING).sort()).toEqual([...ERROR_CODE_VALUES].sort());
  });

  it('reads the host\'s shape, decides by code only, and shows the hint', () => {
    const e = ApiError.from({ code: 'stale', message: 'this approval (a1) is no longer waiting', hint: '', field: '' });
    expect(e.stale).toBe(true);
    expect(e.handling.action).toBe('refresh');
    expect(ApiError.from({ code: 'invalid', message: 'stale: looks like it but is not' }).stale).toBe(false);
    expect(ApiError.from({ code: 'invalid', message: 'bad URL', field: 'base_url' }).field).toBe('base_url');
    expect(errorCode(new Error('x'))).toBe('internal');
    expect(errorText(new ApiError('session s is busy', 'busy', 'Wait for it to finish or press Stop.'))).toBe(
      'session s is busy. Wait for it to finish or press Stop.',
    );
  });
});
