#!/usr/bin/env node
// A real OpenID provider (panva's oidc-provider) shaped like Authentik, for
// Mirante's sign-in tests. It is a test peer, never a production identity
// provider: users and passwords come from a JSON file, state lives in memory
// and it only ever listens on 127.0.0.1.
//
// Usage and the browserless login sequence are in README.md beside this file.

import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { SignJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import Provider from 'oidc-provider';

// Stdout carries only JSON lines that a test harness parses (the readiness
// line, and events with --log-events). oidc-provider prints its notices with
// console.info, so everything console-based goes to stderr instead.
console.log = console.error;
console.info = console.error;
// The in-memory adapter is the point of a throwaway test peer; its warning
// would only add noise to every test that starts one.
const warn = console.warn;
console.warn = (message, ...rest) => {
  if (typeof message === 'string' && message.includes('development-only in-memory adapter')) return;
  warn(message, ...rest);
};
// A harness may read the readiness line and then close its end of the pipe;
// a later write must not kill the provider with EPIPE.
process.stdout.on('error', () => {});

const HERE = path.dirname(fileURLToPath(import.meta.url));

// Authentik serves every OAuth2 endpoint below this prefix; the
// per-application ones (issuer, discovery, JWKS, end-session) add the slug.
const MOUNT = '/application/o';

// Slugs Authentik refuses because they collide with its global endpoints.
const RESERVED_SLUGS = new Set(['authorize', 'token', 'device', 'userinfo', 'introspect', 'revoke']);

// The acr value Authentik puts in every ID token it issues.
const AUTHENTIK_ACR = 'goauthentik.io/providers/oauth2/default';

const USAGE = `Usage: node provider.mjs [options]

Options (each also read from the environment variable in brackets):
  --port N                     port on 127.0.0.1, 0 = any free port (default 0) [OIDC_TEST_PORT]
  --slug SLUG                  Authentik application slug (default mirante) [OIDC_TEST_SLUG]
  --client-id ID               (default mirante) [OIDC_TEST_CLIENT_ID]
  --client-secret SECRET       (default: a fixed test secret) [OIDC_TEST_CLIENT_SECRET]
  --redirect-uri URI           repeatable, at least one [OIDC_TEST_REDIRECT_URIS, space/comma separated]
  --post-logout-redirect-uri URI
                               repeatable [OIDC_TEST_POST_LOGOUT_REDIRECT_URIS]
  --users FILE                 test users (default users.json beside this script) [OIDC_TEST_USERS]
  --hs256                      sign ID tokens with HS256 and the client secret, as Authentik
                               does when the provider has no signing key [OIDC_TEST_HS256=1]
  --hs256-jwks authentik|keys  JWKS body in HS256 mode: "authentik" serves {} like Authentik,
                               "keys" serves {"keys":[]} (default authentik) [OIDC_TEST_HS256_JWKS]
  --id-token-ttl SECONDS       (default 3600) [OIDC_TEST_ID_TOKEN_TTL]
  --access-token-ttl SECONDS   (default 3600) [OIDC_TEST_ACCESS_TOKEN_TTL]
  --id-token-aud VALUE         re-sign every ID token with this aud (a misbehaving provider,
                               to test audience checks) [OIDC_TEST_ID_TOKEN_AUD]
  --id-token-iss VALUE         re-sign every ID token with this iss [OIDC_TEST_ID_TOKEN_ISS]
  --log-events                 also print each recorded event as a JSON line on stdout
                               [OIDC_TEST_LOG_EVENTS=1]
  --exit-with-stdin            exit when stdin reaches end of file, so a crashed harness
                               leaves no provider behind [OIDC_TEST_EXIT_WITH_STDIN=1]
  --help
`;

function fail(message) {
  process.stderr.write(`provider.mjs: ${message}\n`);
  process.exit(2);
}

function readOptions() {
  let parsed;
  try {
    parsed = parseArgs({
      options: {
        port: { type: 'string' },
        slug: { type: 'string' },
        'client-id': { type: 'string' },
        'client-secret': { type: 'string' },
        'redirect-uri': { type: 'string', multiple: true },
        'post-logout-redirect-uri': { type: 'string', multiple: true },
        users: { type: 'string' },
        hs256: { type: 'boolean' },
        'hs256-jwks': { type: 'string' },
        'id-token-ttl': { type: 'string' },
        'access-token-ttl': { type: 'string' },
        'id-token-aud': { type: 'string' },
        'id-token-iss': { type: 'string' },
        'log-events': { type: 'boolean' },
        'exit-with-stdin': { type: 'boolean' },
        help: { type: 'boolean' },
      },
    }).values;
  } catch (err) {
    fail(`${err.message}\n\n${USAGE}`);
  }
  if (parsed.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }

  const env = process.env;
  const list = (value) => (value ? value.split(/[\s,]+/).filter(Boolean) : []);
  const flag = (value) => value === '1' || value === 'true';
  const integer = (name, value, min, max) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) fail(`${name} must be an integer from ${min} to ${max}, got "${value}"`);
    return n;
  };

  const options = {
    port: integer('--port', parsed.port ?? env.OIDC_TEST_PORT ?? '0', 0, 65535),
    slug: parsed.slug ?? env.OIDC_TEST_SLUG ?? 'mirante',
    clientId: parsed['client-id'] ?? env.OIDC_TEST_CLIENT_ID ?? 'mirante',
    // Long enough for HS256 (a key shorter than the hash is weak and some
    // libraries refuse it); Authentik generates 128 characters.
    clientSecret: parsed['client-secret'] ?? env.OIDC_TEST_CLIENT_SECRET
      ?? 'mirante-test-client-secret-0123456789abcdefghijklmnopqrstuvwxyz',
    redirectUris: parsed['redirect-uri'] ?? list(env.OIDC_TEST_REDIRECT_URIS),
    postLogoutRedirectUris: parsed['post-logout-redirect-uri'] ?? list(env.OIDC_TEST_POST_LOGOUT_REDIRECT_URIS),
    usersFile: parsed.users ?? env.OIDC_TEST_USERS ?? path.join(HERE, 'users.json'),
    alg: (parsed.hs256 || flag(env.OIDC_TEST_HS256)) ? 'HS256' : 'RS256',
    hs256Jwks: parsed['hs256-jwks'] ?? env.OIDC_TEST_HS256_JWKS ?? 'authentik',
    idTokenTtl: integer('--id-token-ttl', parsed['id-token-ttl'] ?? env.OIDC_TEST_ID_TOKEN_TTL ?? '3600', 1, 31536000),
    accessTokenTtl: integer('--access-token-ttl', parsed['access-token-ttl'] ?? env.OIDC_TEST_ACCESS_TOKEN_TTL ?? '3600', 1, 31536000),
    idTokenAud: parsed['id-token-aud'] ?? env.OIDC_TEST_ID_TOKEN_AUD,
    idTokenIss: parsed['id-token-iss'] ?? env.OIDC_TEST_ID_TOKEN_ISS,
    logEvents: Boolean(parsed['log-events'] || flag(env.OIDC_TEST_LOG_EVENTS)),
    exitWithStdin: Boolean(parsed['exit-with-stdin'] || flag(env.OIDC_TEST_EXIT_WITH_STDIN)),
  };

  if (!/^[a-z0-9][a-z0-9_-]*$/i.test(options.slug) || RESERVED_SLUGS.has(options.slug)) {
    fail(`--slug "${options.slug}" is not a usable Authentik application slug`);
  }
  if (options.redirectUris.length === 0) {
    fail('at least one --redirect-uri is required (the relying party\'s callback URL)');
  }
  if (!['authentik', 'keys'].includes(options.hs256Jwks)) {
    fail('--hs256-jwks must be "authentik" or "keys"');
  }
  return options;
}

function loadUsers(file) {
  let users;
  try {
    users = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    fail(`cannot read users from ${file}: ${err.message}`);
  }
  if (!Array.isArray(users)) fail(`${file} must hold a JSON array of users`);
  for (const user of users) {
    for (const field of ['sub', 'username', 'password', 'name', 'email']) {
      if (typeof user[field] !== 'string' || user[field] === '') fail(`${file}: every user needs a non-empty "${field}"`);
    }
    if (!Array.isArray(user.groups)) fail(`${file}: user ${user.username} needs a "groups" array (may be empty)`);
  }
  return users;
}

const options = readOptions();
const users = loadUsers(options.usersFile);
const usersBySub = new Map(users.map((user) => [user.sub, user]));

// ---------------------------------------------------------------------------
// Events a test can inspect through GET /__test/events.

const MAX_EVENTS = 10000;
const events = [];
let eventSeq = 0;

function record(event, fields) {
  const entry = { seq: ++eventSeq, at: new Date().toISOString(), event, ...fields };
  events.push(entry);
  if (events.length > MAX_EVENTS) events.shift();
  if (options.logEvents) process.stdout.write(`${JSON.stringify(entry)}\n`);
}

function errorFields(ctx, err) {
  return {
    ok: false,
    error: err.error ?? 'server_error',
    error_description: err.error_description ?? err.message,
    client_id: ctx.oidc?.client?.clientId ?? null,
  };
}

// ---------------------------------------------------------------------------
// HTML. Every page is self-contained: oidc-provider's default pages import
// web fonts, which a headless browser in the tests must not try to fetch.

const escapeHtml = (value) => String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title, body) {
  return `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body>
<h1>${escapeHtml(title)}</h1>
${body}
</body>
</html>
`;
}

function loginPage(details, error) {
  const action = `/interaction/${encodeURIComponent(details.uid)}/login`;
  const abort = `/interaction/${encodeURIComponent(details.uid)}/abort`;
  return page('Sign in', `<p>Application <code>${escapeHtml(details.params.client_id)}</code> asks for
<code>${escapeHtml(details.params.scope ?? '')}</code>.</p>
${error ? `<p id="error" role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post" action="${action}">
<label>Username or e-mail <input name="username" autocomplete="username" autofocus></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Sign in</button>
</form>
<p><a href="${abort}">Cancel</a></p>`);
}

function sendHtml(res, status, html) {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(html);
}

function sendJson(res, status, value) {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(value));
}

// ---------------------------------------------------------------------------
// Listen first: the issuer contains the port, and with --port 0 the port is
// known only after binding.

const server = http.createServer();
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(options.port, '127.0.0.1', resolve);
}).catch((err) => fail(`cannot listen on 127.0.0.1:${options.port}: ${err.message}`));

const origin = `http://127.0.0.1:${server.address().port}`;
const issuer = `${origin}${MOUNT}/${options.slug}/`;

// A fresh RSA key per run, as a signing key selected in Authentik. It stays in
// the key store in HS256 mode too (oidc-provider wants one), but is then
// neither used nor published.
// The key is generated as PEM and read back before it is exported as a JWK: on Node.js 20,
// exporting the key object that generateKeyPairSync returns can deadlock when a garbage
// collection during the export frees the finished key-generation job, which takes the lock the
// export holds (seen about once in 40 starts).
const { privateKey: privatePem } = crypto.generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});
const privateKey = crypto.createPrivateKey(privatePem);
const signingJwk = {
  ...privateKey.export({ format: 'jwk' }),
  kid: crypto.randomBytes(16).toString('hex'),
  alg: 'RS256',
  use: 'sig',
};

function findAccount(ctx, sub) {
  const user = usersBySub.get(sub);
  if (!user) return undefined;
  return {
    accountId: sub,
    // The values of Authentik's default scope mappings: "profile" carries
    // groups, "email" carries email_verified false unless the file says
    // otherwise. oidc-provider filters them by the granted scopes.
    async claims() {
      return {
        sub,
        name: user.name,
        given_name: user.name,
        preferred_username: user.username,
        nickname: user.username,
        groups: [...user.groups],
        email: user.email,
        email_verified: user.email_verified ?? false,
      };
    },
  };
}

// Mirante is a first-party client and Authentik's default authorization flow
// asks for no consent, so grant every requested scope up front; the user only
// ever sees the login form.
async function loadExistingGrant(ctx) {
  const { oidc } = ctx;
  const grantId = oidc.result?.consent?.grantId || oidc.session.grantIdFor(oidc.client.clientId);
  let grant = grantId ? await oidc.provider.Grant.find(grantId) : undefined;
  if (!grant) {
    grant = new oidc.provider.Grant({ accountId: oidc.session.accountId, clientId: oidc.client.clientId });
  }
  const scopes = [...oidc.requestParamOIDCScopes];
  if (scopes.length) grant.addOIDCScope(scopes.join(' '));
  await grant.save();
  return grant;
}

const provider = new Provider(issuer, {
  clients: [{
    client_id: options.clientId,
    client_secret: options.clientSecret,
    redirect_uris: options.redirectUris,
    post_logout_redirect_uris: options.postLogoutRedirectUris,
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    // client_secret_post is accepted as well: oidc-provider treats the two
    // secret-based methods as interchangeable, like Authentik.
    token_endpoint_auth_method: 'client_secret_basic',
    id_token_signed_response_alg: options.alg,
  }],
  jwks: { keys: [signingJwk] },
  enabledJWA: { idTokenSigningAlgValues: ['RS256', 'HS256'] },
  pkce: { required: () => true },
  responseTypes: ['code'],
  clientAuthMethods: ['client_secret_basic', 'client_secret_post'],
  scopes: ['openid', 'profile', 'email', 'offline_access'],
  claims: {
    // Authentik's ID tokens always carry acr, amr and auth_time; oidc-provider
    // adds claims outside a scope only when asked for, so they ride on openid.
    openid: ['sub', 'acr', 'amr', 'auth_time'],
    profile: ['name', 'given_name', 'preferred_username', 'nickname', 'groups'],
    email: ['email', 'email_verified'],
    sid: null,
    iss: null,
  },
  acrValues: [AUTHENTIK_ACR],
  // Authentik's "Include claims in id_token" is on by default, so scope claims
  // (groups among them) are in the ID token and not only at userinfo.
  conformIdTokenClaims: false,
  findAccount,
  loadExistingGrant,
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  // oidc-provider builds endpoint URLs from where it is mounted (MOUNT), not
  // from the issuer path. These give Authentik's paths; the trailing slash is
  // added in discovery below (the router accepts both spellings, and a route
  // ending in "/" would give the resume and confirm routes a double slash).
  routes: {
    authorization: '/authorize',
    token: '/token',
    userinfo: '/userinfo',
    introspection: '/introspect',
    revocation: '/revoke',
    end_session: `/${options.slug}/end-session`,
    jwks: `/${options.slug}/jwks`,
  },
  ttl: {
    AccessToken: options.accessTokenTtl,
    AuthorizationCode: 60,
    IdToken: options.idTokenTtl,
    Interaction: 600,
    Session: 24 * 60 * 60,
    Grant: 24 * 60 * 60,
    RefreshToken: 30 * 24 * 60 * 60,
  },
  cookies: { keys: [crypto.randomBytes(32).toString('hex')] },
  features: {
    devInteractions: { enabled: false },
    // Authentik has neither; keeping them off keeps discovery comparable.
    dPoP: { enabled: false },
    pushedAuthorizationRequests: { enabled: false },
    introspection: { enabled: true },
    revocation: { enabled: true },
    rpInitiatedLogout: {
      enabled: true,
      // oidc-provider asks the user to confirm the sign-out (Authentik runs
      // its invalidation flow instead). A plain form whose hidden fields say
      // "yes" keeps that step drivable without JavaScript: POST the fields to
      // the form's action.
      async logoutSource(ctx, form) {
        ctx.type = 'html';
        ctx.body = page('Sign out', form.replace(
          '</form>',
          '<input type="hidden" name="logout" value="yes"/><button type="submit">Sign out</button></form>',
        ));
      },
      async postLogoutSuccessSource(ctx) {
        ctx.type = 'html';
        ctx.body = page('Signed out', '<p>You have been signed out.</p>');
      },
    },
  },
  async renderError(ctx, out) {
    ctx.type = 'html';
    ctx.body = page('Sign-in error', `<dl>${Object.entries(out)
      .map(([key, value]) => `<dt>${escapeHtml(key)}</dt><dd id="${escapeHtml(key)}">${escapeHtml(value)}</dd>`)
      .join('')}</dl>`);
  },
});

// ---------------------------------------------------------------------------
// Recording, and the places where Authentik's responses differ from
// oidc-provider's.

provider.on('authorization.success', (ctx) => {
  const { params } = ctx.oidc;
  record('authorization', {
    ok: true,
    client_id: ctx.oidc.client.clientId,
    sub: ctx.oidc.session.accountId,
    scope: params.scope,
    redirect_uri: params.redirect_uri,
    state: params.state ?? null,
    nonce: params.nonce ?? null,
    code_challenge_method: params.code_challenge_method ?? null,
  });
});
provider.on('grant.success', (ctx) => {
  record('token', {
    ok: true,
    grant_type: ctx.oidc.params.grant_type,
    client_id: ctx.oidc.client.clientId,
    client_auth: ctx.get('authorization') ? 'client_secret_basic' : 'client_secret_post',
    sub: ctx.oidc.account?.accountId ?? null,
    scope: ctx.body?.scope ?? null,
  });
});
for (const [emitted, event] of [
  ['authorization.error', 'authorization'],
  ['grant.error', 'token'],
  ['userinfo.error', 'userinfo'],
  ['end_session.error', 'end_session'],
  ['end_session_confirm.error', 'end_session_confirmed'],
]) {
  provider.on(emitted, (ctx, err) => record(event, errorFields(ctx, err)));
}
provider.on('server_error', (ctx, err) => {
  console.error(err);
  record('server_error', errorFields(ctx, err));
});

const ENDPOINT_FIELDS = [
  'authorization_endpoint', 'token_endpoint', 'userinfo_endpoint', 'introspection_endpoint',
  'revocation_endpoint', 'end_session_endpoint', 'jwks_uri',
];

async function tamperIdToken(jwt) {
  const header = decodeProtectedHeader(jwt);
  const payload = decodeJwt(jwt);
  if (options.idTokenAud !== undefined) payload.aud = options.idTokenAud;
  if (options.idTokenIss !== undefined) payload.iss = options.idTokenIss;
  const key = options.alg === 'HS256' ? new TextEncoder().encode(options.clientSecret) : privateKey;
  return new SignJWT(payload).setProtectedHeader(header).sign(key);
}

provider.use(async (ctx, next) => {
  await next();
  switch (ctx.oidc?.route) {
    case 'discovery':
      for (const field of ENDPOINT_FIELDS) {
        if (typeof ctx.body[field] === 'string' && !ctx.body[field].endsWith('/')) ctx.body[field] += '/';
      }
      // Authentik advertises the one algorithm its tokens are signed with.
      ctx.body.id_token_signing_alg_values_supported = [options.alg];
      break;
    case 'jwks':
      // Without a signing key Authentik has nothing to publish and answers
      // {} (no "keys" member at all).
      if (options.alg === 'HS256') ctx.body = options.hs256Jwks === 'keys' ? { keys: [] } : {};
      break;
    case 'token':
      if (ctx.status === 200 && ctx.body?.id_token
        && (options.idTokenAud !== undefined || options.idTokenIss !== undefined)) {
        ctx.body.id_token = await tamperIdToken(ctx.body.id_token);
      }
      break;
    case 'userinfo':
      if (ctx.status === 200) record('userinfo', { ok: true, sub: ctx.body.sub });
      break;
    case 'end_session':
      if (ctx.status === 200) {
        const { params, entities, session } = ctx.oidc;
        record('end_session', {
          ok: true,
          client_id: ctx.oidc.client?.clientId ?? null,
          id_token_hint: Boolean(params.id_token_hint),
          sub: entities.IdTokenHint?.payload.sub ?? null,
          post_logout_redirect_uri: params.post_logout_redirect_uri ?? null,
          state: params.state ?? null,
          provider_session: Boolean(session?.accountId),
        });
      }
      break;
    case 'end_session_confirm':
      if (ctx.status === 303) {
        record('end_session_confirmed', {
          ok: true,
          client_id: ctx.oidc.client?.clientId ?? null,
          redirect_to: ctx.response.get('location'),
        });
      }
      break;
    default:
  }
});

// ---------------------------------------------------------------------------
// The login interaction: a plain HTML form, no JavaScript.

async function readForm(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > 64 * 1024) throw new Error('form body too large');
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

// Only reached if a prompt other than login is raised (loadExistingGrant
// normally grants everything first): consent is given without asking.
async function autoConsent(req, res, details) {
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
  const { missingOIDCScope, missingOIDCClaims } = details.prompt.details;
  if (missingOIDCScope) grant.addOIDCScope(missingOIDCScope.join(' '));
  if (missingOIDCClaims) grant.addOIDCClaims(missingOIDCClaims);
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

async function handleInteraction(req, res, uid, action) {
  let details;
  try {
    details = await provider.interactionDetails(req, res);
  } catch {
    sendHtml(res, 400, page('Sign-in expired', '<p>This sign-in attempt is unknown or has expired. Start again from the application.</p>'));
    return;
  }
  if (details.uid !== uid) {
    sendHtml(res, 400, page('Sign-in expired', '<p>This sign-in attempt does not match your browser session.</p>'));
    return;
  }

  if (details.prompt.name === 'consent') {
    await autoConsent(req, res, details);
    return;
  }

  if (action === 'abort') {
    record('login', { ok: false, username: null, reason: 'aborted' });
    await provider.interactionFinished(req, res, {
      error: 'access_denied',
      error_description: 'End-User aborted interaction',
    }, { mergeWithLastSubmission: false });
    return;
  }

  if (action === 'login') {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const form = await readForm(req);
    const username = form.get('username') ?? '';
    const password = form.get('password') ?? '';
    const user = users.find((u) => (u.username === username || u.email === username) && u.password === password);
    if (!user) {
      record('login', { ok: false, username, reason: 'invalid_credentials' });
      sendHtml(res, 401, loginPage(details, 'Invalid username or password.'));
      return;
    }
    record('login', { ok: true, username: user.username, sub: user.sub });
    await provider.interactionFinished(req, res, {
      login: { accountId: user.sub, acr: AUTHENTIK_ACR, amr: ['pwd'] },
    }, { mergeWithLastSubmission: false });
    return;
  }

  sendHtml(res, 200, loginPage(details));
}

// ---------------------------------------------------------------------------
// Request routing.

function handleEvents(req, res, url) {
  if (req.method === 'GET') {
    const only = url.searchParams.get('event');
    sendJson(res, 200, only ? events.filter((e) => e.event === only) : events);
  } else if (req.method === 'DELETE') {
    events.length = 0;
    res.writeHead(204).end();
  } else {
    res.writeHead(405, { allow: 'GET, DELETE' }).end();
  }
}

const oidcCallback = provider.callback();
const discoveryPrefix = `${MOUNT}/${options.slug}/.well-known/`;

async function route(req, res) {
  const url = new URL(req.url, origin);
  const { pathname } = url;

  if (pathname === '/__test/events') {
    handleEvents(req, res, url);
    return;
  }

  const interaction = /^\/interaction\/([^/]+)(?:\/(login|abort))?$/.exec(pathname);
  if (interaction) {
    await handleInteraction(req, res, decodeURIComponent(interaction[1]), interaction[2]);
    return;
  }

  // Discovery exists only per application, as in Authentik. It is handed to
  // oidc-provider as if it were mounted at MOUNT, because that mount point is
  // what it builds the advertised endpoint URLs from.
  if (pathname === `${discoveryPrefix}openid-configuration`) {
    req.url = req.url.slice(`${MOUNT}/${options.slug}`.length);
    req.originalUrl = `${MOUNT}${req.url}`;
    oidcCallback(req, res);
    return;
  }

  if (pathname.startsWith(`${MOUNT}/`) && !pathname.startsWith(`${MOUNT}/.well-known/`)
    && !pathname.startsWith(discoveryPrefix)) {
    req.originalUrl = req.url;
    req.url = req.url.slice(MOUNT.length);
    oidcCallback(req, res);
    return;
  }

  sendJson(res, 404, { error: 'not_found', path: pathname });
}

server.on('request', (req, res) => {
  route(req, res).catch((err) => {
    console.error(err);
    if (!res.headersSent) sendJson(res, 500, { error: 'server_error' });
    else res.end();
  });
});

// ---------------------------------------------------------------------------
// Lifecycle.

let stopping = false;
function shutdown() {
  if (stopping) return;
  stopping = true;
  server.close(() => process.exit(0));
  server.closeAllConnections();
  setTimeout(() => process.exit(0), 2000).unref();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
if (options.exitWithStdin) {
  process.stdin.on('end', shutdown);
  process.stdin.on('error', shutdown);
  process.stdin.resume();
}

process.stdout.write(`${JSON.stringify({
  event: 'ready',
  issuer,
  port: server.address().port,
  alg: options.alg,
  discovery: `${issuer}.well-known/openid-configuration`,
  events: `${origin}/__test/events`,
})}\n`);
