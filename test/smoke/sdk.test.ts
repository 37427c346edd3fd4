import { ClientFactory } from '@a2a-js/sdk/client';
import { DefaultRequestHandler } from '@a2a-js/sdk/server';
import { LangoConfig } from '../../src/config/schema';

it('loads the SDK and the config schema under jest', () => {
  expect(typeof ClientFactory).toBe('function');
  expect(typeof DefaultRequestHandler).toBe('function');
  expect(LangoConfig.parse({}).server.port).toBe(4000);
});
