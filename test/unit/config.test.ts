import { describe, expect, it } from 'vitest';
import { defaultDeliveryOptions, deliveryOptionsFrom } from '../../api/ingress/deliver';
import { loadConfig } from '../../common/config';

// The codec endpoint's browser origins: the Temporal UI the embedded stack runs, wherever it runs.

describe('CODEC_CORS_ORIGINS', () => {
  it('defaults to the local Temporal UI on its default port', () => {
    expect(loadConfig({}).CODEC_CORS_ORIGINS).toEqual(['http://127.0.0.1:8233', 'http://localhost:8233']);
  });

  it('follows TEMPORAL_UI_PORT when unset, so the UI on another port can still decode payloads', () => {
    expect(loadConfig({ TEMPORAL_UI_PORT: '18233' }).CODEC_CORS_ORIGINS).toEqual([
      'http://127.0.0.1:18233',
      'http://localhost:18233',
    ]);
    expect(loadConfig({ TEMPORAL_UI_PORT: '18233', CODEC_CORS_ORIGINS: '' }).CODEC_CORS_ORIGINS).toEqual([
      'http://127.0.0.1:18233',
      'http://localhost:18233',
    ]);
  });

  it('is taken as given when set', () => {
    expect(
      loadConfig({ TEMPORAL_UI_PORT: '18233', CODEC_CORS_ORIGINS: 'https://ui.example.com, http://x:1' })
        .CODEC_CORS_ORIGINS,
    ).toEqual(['https://ui.example.com', 'http://x:1']);
  });
});

describe('webhook inbox settings', () => {
  it('default to a 1 s relay interval, a 60 s longest back-off and a day before giving up', () => {
    const c = loadConfig({});
    expect(c.INBOX_RELAY_INTERVAL_MS).toBe(1_000);
    expect(c.INBOX_RETRY_MAX_MS).toBe(60_000);
    expect(c.INBOX_GIVE_UP_MS).toBe(24 * 3600_000);
  });

  it('give the delivery the same options whether the configuration is read or not', () => {
    expect(deliveryOptionsFrom(loadConfig({}))).toEqual(defaultDeliveryOptions);
    expect(deliveryOptionsFrom({})).toEqual(defaultDeliveryOptions);
  });
});

describe('back office settings', () => {
  it('make the session cookie Secure unless the API listens on loopback', () => {
    expect(loadConfig({}).BACKOFFICE_SECURE_COOKIE).toBe(false);
    expect(loadConfig({ HTTP_HOST: '0.0.0.0' }).BACKOFFICE_SECURE_COOKIE).toBe(true);
    expect(loadConfig({ HTTP_HOST: '10.1.2.3' }).BACKOFFICE_SECURE_COOKIE).toBe(true);
    expect(
      loadConfig({ HTTP_HOST: '0.0.0.0', BACKOFFICE_SECURE_COOKIE: 'false' }).BACKOFFICE_SECURE_COOKIE,
    ).toBe(false);
  });

  it('link cases to the local Temporal UI unless told where it is, and refuse a short session secret', () => {
    expect(loadConfig({ TEMPORAL_UI_PORT: '9999' }).TEMPORAL_UI_URL).toBe('http://127.0.0.1:9999');
    expect(loadConfig({ TEMPORAL_UI_URL: 'https://temporal.example.com/' }).TEMPORAL_UI_URL).toBe(
      'https://temporal.example.com',
    );
    expect(() => loadConfig({ BACKOFFICE_SESSION_SECRET: 'short' })).toThrow(/BACKOFFICE_SESSION_SECRET/);
  });
});
