// A real OAuth 2.1 / OpenID authorization server (panva's oidc-provider,
// pinned in interop/package.json) for lousho's resource-server tests, on
// 127.0.0.1 at a free port.
//
// It signs JWT access tokens (RFC 9068, RS256) for any resource indicator
// (RFC 8707) on loopback, with the scopes `mcp:use mcp:research mcp:admin`:
// - `client_credentials` for the confidential clients `alice` and `bob`
//   (secrets `alice-secret`, `bob-secret`, client_secret_basic or _post);
//   a token's `sub` is the client id.
// - `client_credentials` for the confidential client `carol`
//   (`carol-secret`), whose access tokens are opaque: a resource server
//   learns about them by token introspection (RFC 7662), as the client
//   `mcp-server` (`mcp-server-secret`, client_secret_basic), at
//   `/token/introspection`; `GET /test/introspections` answers how many
//   introspection requests came so far. Tokens are revoked at
//   `/token/revocation` by their client.
// - authorization code + PKCE for public clients (pre-registered `lousho`,
//   or dynamically registered): oidc-provider's own development
//   interactions, a sign-in form (any login and password; the login is the
//   token's `sub`) and a consent form, which a test's stand-in browser
//   fills in and posts (`lousho_testkit::oidc_provider::Browser`).
//
// On start it prints one JSON line: { issuer, kid, privateKeyPem,
// strangerKeyPem } — the signing key, so tests can forge tokens the issuer
// "signed" with wrong claims, and an RSA key the issuer does not know. It
// runs until stdin closes.

import { createServer } from 'node:http';
import { generateKeyPairSync } from 'node:crypto';
import Provider from 'oidc-provider';

// stdout carries the start line only: oidc-provider's notices (console.info)
// go to stderr, which the tests do not read — once the test has read the
// start line it closes stdout, and a later write there would kill us.
console.info = console.error;
console.log = console.error;

const SCOPES = 'mcp:use mcp:research mcp:admin';
const KID = 'k1';

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: KID, alg: 'RS256', use: 'sig' };
const privateKeyPem = privateKey.export({ format: 'pem', type: 'pkcs8' });
const strangerKeyPem = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .privateKey.export({ format: 'pem', type: 'pkcs8' });

const isLoopbackUrl = (value) => {
  try {
    const url = new URL(value);
    return ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  } catch {
    return false;
  }
};

const server = createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const confidential = (id) => ({
  client_id: id,
  client_secret: `${id}-secret`,
  grant_types: ['client_credentials'],
  redirect_uris: [],
  response_types: [],
  token_endpoint_auth_method: 'client_secret_basic',
});

const provider = new Provider(issuer, {
  clients: [
    confidential('alice'),
    { ...confidential('bob') },
    confidential('carol'),
    confidential('mcp-server'),
    {
      client_id: 'lousho',
      // Native: a loopback redirect URI may use any port (RFC 8252 §7.3).
      application_type: 'native',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: ['http://127.0.0.1/callback'],
    },
  ],
  clientBasedCORS: () => true,
  jwks: { keys: [jwk] },
  scopes: ['openid', 'offline_access', ...SCOPES.split(' ')],
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: true },
    clientCredentials: { enabled: true },
    registration: { enabled: true },
    introspection: {
      enabled: true,
      // The resource server introspects any token; a client its own.
      allowedPolicy: (_ctx, client, token) =>
        client.clientId === 'mcp-server' || client.clientId === token.clientId,
    },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: (_ctx, _client, oneOf) => oneOf,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resourceIndicator, client) => {
        if (!isLoopbackUrl(resourceIndicator)) {
          throw new Provider.errors.InvalidTarget();
        }
        if (client?.clientId === 'carol') {
          return {
            scope: SCOPES,
            audience: resourceIndicator,
            accessTokenTTL: 300,
            accessTokenFormat: 'opaque',
          };
        }
        return {
          scope: SCOPES,
          audience: resourceIndicator,
          accessTokenTTL: 300,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
  findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
});
provider.proxy = false;

let introspections = 0;
const callback = provider.callback();
server.on('request', (req, res) => {
  const path = new URL(req.url, issuer).pathname;
  if (req.method === 'GET' && path === '/test/introspections') {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ introspections }));
    return;
  }
  if (req.method === 'POST' && path === '/token/introspection') {
    introspections += 1;
  }
  callback(req, res);
});

process.stdout.write(`${JSON.stringify({ issuer, kid: KID, privateKeyPem, strangerKeyPem })}\n`);
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
process.stdin.on('close', () => process.exit(0));
