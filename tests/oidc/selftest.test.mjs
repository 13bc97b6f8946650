// Self-test of the Authentik-shaped provider: runs provider.mjs as a child
// process exactly as a test harness would and drives it with plain HTTP, no
// browser. Run from this directory with `node --test`.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import readline from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';

const PROVIDER = fileURLToPath(new URL('./provider.mjs', import.meta.url));
const USERS = JSON.parse(fs.readFileSync(new URL('./users.json', import.meta.url), 'utf8'));
const ADMIN = USERS.find((u) => u.username === 'admin');
const RESEARCHER = USERS.find((u) => u.username === 'researcher');
const VISITOR = USERS.find((u) => u.username === 'visitor');

const CLIENT_ID = 'mirante';
const CLIENT_SECRET = 'selftest-client-secret-with-enough-length-for-hs256-0123456789';
// Nothing listens here: the relying party's callback is never contacted, the
// test reads the code from the redirect that points at it.
const REDIRECT_URI = 'http://127.0.0.1:9/auth/callback';
const POST_LOGOUT_REDIRECT_URI = 'http://127.0.0.1:9/';
const AUTHENTIK_ACR = 'goauthentik.io/providers/oauth2/default';

const running = new Set();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

async function startProvider(extraArgs = []) {
  const child = spawn(process.execPath, [
    PROVIDER, '--port', '0',
    '--client-id', CLIENT_ID, '--client-secret', CLIENT_SECRET,
    '--redirect-uri', REDIRECT_URI, '--post-logout-redirect-uri', POST_LOGOUT_REDIRECT_URI,
    ...extraArgs,
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let stderr = '';
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  const exited = once(child, 'exit');
  const lines = readline.createInterface({ input: child.stdout });
  const firstLine = await Promise.race([
    once(lines, 'line').then(([line]) => line),
    exited.then(([code]) => { throw new Error(`provider exited (${code}) before ready:\n${stderr}`); }),
  ]);
  const ready = JSON.parse(firstLine);
  const discovery = await (await fetch(ready.discovery)).json();
  return {
    ready,
    discovery,
    origin: new URL(ready.issuer).origin,
    async events(kind) {
      const url = new URL(ready.events);
      if (kind) url.searchParams.set('event', kind);
      return (await fetch(url)).json();
    },
    async stop() {
      child.kill('SIGTERM');
      const [code, signal] = await exited;
      running.delete(child);
      return { code, signal };
    },
  };
}

const base64url = (buffer) => Buffer.from(buffer).toString('base64url');

// A minimal user agent: manual redirects and a cookie jar that honours Path,
// which is what a Rust test client has to do as well.
class Browser {
  #cookies = new Map();

  #store(response) {
    for (const header of response.headers.getSetCookie()) {
      const [pair, ...attributes] = header.split(';');
      const name = pair.slice(0, pair.indexOf('=')).trim();
      const value = pair.slice(pair.indexOf('=') + 1).trim();
      let path = '/';
      let expired = value === '';
      for (const attribute of attributes) {
        const [key, val = ''] = attribute.trim().split('=');
        if (key.toLowerCase() === 'path') path = val;
        if (key.toLowerCase() === 'max-age' && Number(val) <= 0) expired = true;
        if (key.toLowerCase() === 'expires' && Date.parse(val) <= Date.now()) expired = true;
      }
      if (expired) this.#cookies.delete(`${name};${path}`);
      else this.#cookies.set(`${name};${path}`, { name, value, path });
    }
  }

  #cookieHeader(url) {
    const { pathname } = new URL(url);
    return [...this.#cookies.values()]
      .filter(({ path }) => pathname === path || pathname.startsWith(path.endsWith('/') ? path : `${path}/`))
      .map(({ name, value }) => `${name}=${value}`)
      .join('; ');
  }

  cookieNames() {
    return [...this.#cookies.values()].map(({ name }) => name);
  }

  async request(url, { method = 'GET', form } = {}) {
    const headers = { accept: 'text/html' };
    const cookie = this.#cookieHeader(url);
    if (cookie) headers.cookie = cookie;
    const init = { method, headers, redirect: 'manual' };
    if (form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      init.body = new URLSearchParams(form).toString();
    }
    const response = await fetch(url, init);
    this.#store(response);
    return response;
  }
}

function formOf(html) {
  const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
  const fields = Object.fromEntries(
    [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/?>/g)].map((m) => [m[1], m[2]]),
  );
  return { action: action?.replaceAll('&amp;', '&'), fields };
}

function authorizationRequest(op, { scope = 'openid profile email', pkce = true } = {}) {
  const verifier = base64url(crypto.randomBytes(32));
  const state = base64url(crypto.randomBytes(16));
  const nonce = base64url(crypto.randomBytes(16));
  const url = new URL(op.discovery.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: CLIENT_ID,
    redirect_uri: REDIRECT_URI,
    scope,
    state,
    nonce,
    ...(pkce ? { code_challenge: base64url(crypto.hash('sha256', verifier, 'buffer')), code_challenge_method: 'S256' } : {}),
  });
  return { url, verifier, state, nonce };
}

// Follows redirects from the authorization request to the relying party's
// callback, filling the login form when it appears. Returns every hop so the
// sequence itself can be asserted.
async function signIn(op, browser, user, options) {
  const request = authorizationRequest(op, options);
  const hops = [];
  let next = { url: request.url, method: 'GET' };
  for (let i = 0; i < 10; i += 1) {
    const response = await browser.request(next.url, next);
    hops.push({ method: next.method, path: new URL(next.url).pathname, status: response.status });
    const location = response.headers.get('location');
    if (response.status === 303 || response.status === 302) {
      const target = new URL(location, next.url);
      if (target.href.startsWith(REDIRECT_URI)) {
        return { ...request, hops, callback: target, params: target.searchParams };
      }
      next = { url: target, method: 'GET' };
    } else if (response.status === 200) {
      const { action } = formOf(await response.text());
      assert.ok(action, `expected the login form at ${next.url}`);
      next = { url: new URL(action, next.url), method: 'POST', form: { username: user.username, password: user.password } };
    } else {
      throw new Error(`unexpected ${response.status} at ${next.url}: ${await response.text()}`);
    }
  }
  throw new Error('too many hops before the callback');
}

async function exchangeCode(op, code, verifier, { auth = 'basic' } = {}) {
  const body = new URLSearchParams({
    grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier,
  });
  const headers = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  if (auth === 'basic') {
    headers.authorization = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`;
  } else {
    body.set('client_id', CLIENT_ID);
    body.set('client_secret', CLIENT_SECRET);
  }
  const response = await fetch(op.discovery.token_endpoint, { method: 'POST', headers, body });
  return { status: response.status, body: await response.json() };
}

async function signInAndExchange(op, user, options) {
  const flow = await signIn(op, new Browser(), user, options);
  const tokens = await exchangeCode(op, flow.params.get('code'), flow.verifier);
  assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  return { ...flow, tokens: tokens.body };
}

const verifyRs256 = (op, jwt, extra = {}) => jwtVerify(jwt, createRemoteJWKSet(new URL(op.discovery.jwks_uri)), {
  issuer: op.ready.issuer, audience: CLIENT_ID, algorithms: ['RS256'], ...extra,
});

describe('RS256 mode, like an Authentik provider with a signing key', () => {
  let op;
  before(async () => { op = await startProvider(); });
  after(async () => { await op.stop(); });

  test('the issuer is per application and keeps its trailing slash', () => {
    assert.match(op.ready.issuer, /^http:\/\/127\.0\.0\.1:\d+\/application\/o\/mirante\/$/);
    assert.equal(op.ready.event, 'ready');
    assert.equal(op.discovery.issuer, op.ready.issuer);
  });

  test('discovery advertises Authentik\'s endpoint paths and only S256 PKCE', () => {
    const d = op.discovery;
    assert.equal(d.authorization_endpoint, `${op.origin}/application/o/authorize/`);
    assert.equal(d.token_endpoint, `${op.origin}/application/o/token/`);
    assert.equal(d.userinfo_endpoint, `${op.origin}/application/o/userinfo/`);
    assert.equal(d.end_session_endpoint, `${op.origin}/application/o/mirante/end-session/`);
    assert.equal(d.jwks_uri, `${op.origin}/application/o/mirante/jwks/`);
    assert.equal(d.introspection_endpoint, `${op.origin}/application/o/introspect/`);
    assert.equal(d.revocation_endpoint, `${op.origin}/application/o/revoke/`);
    assert.deepEqual(d.id_token_signing_alg_values_supported, ['RS256']);
    assert.deepEqual(d.code_challenge_methods_supported, ['S256']);
    assert.deepEqual(d.token_endpoint_auth_methods_supported, ['client_secret_basic', 'client_secret_post']);
    assert.deepEqual(d.scopes_supported, ['openid', 'profile', 'email', 'offline_access']);
  });

  test('there is no discovery document outside the application slug', async () => {
    const response = await fetch(`${op.origin}/application/o/.well-known/openid-configuration`);
    assert.equal(response.status, 404);
  });

  test('every advertised endpoint answers at its advertised URL', async () => {
    const d = op.discovery;
    const post = (url) => fetch(url, { method: 'POST', headers: { accept: 'application/json' } });
    assert.equal((await fetch(d.authorization_endpoint)).status, 400);
    const token = await post(d.token_endpoint);
    assert.equal(token.status, 400);
    assert.equal((await token.json()).error, 'invalid_request');
    const userinfo = await fetch(d.userinfo_endpoint, { headers: { accept: 'application/json' } });
    assert.equal(userinfo.status, 401);
    assert.equal((await userinfo.json()).error, 'invalid_token');
    assert.equal((await post(d.introspection_endpoint)).status, 400);
    assert.equal((await post(d.revocation_endpoint)).status, 400);
    assert.equal((await fetch(d.end_session_endpoint)).status, 200);
    const jwks = await (await fetch(d.jwks_uri)).json();
    assert.equal(jwks.keys.length, 1);
    assert.equal(jwks.keys[0].kty, 'RSA');
    assert.equal(jwks.keys[0].alg, 'RS256');
    assert.equal(jwks.keys[0].use, 'sig');
    assert.equal(jwks.keys[0].d, undefined, 'the JWKS must not leak the private exponent');
  });

  test('an admin signs in through the real redirects and the verified ID token carries groups', async () => {
    const flow = await signIn(op, new Browser(), ADMIN);
    assert.deepEqual(flow.hops.map(({ method, status }) => `${method} ${status}`), ['GET 303', 'GET 200', 'POST 303', 'GET 303']);
    assert.equal(flow.hops[0].path, '/application/o/authorize/');
    assert.match(flow.hops[1].path, /^\/interaction\/[\w-]+$/);
    assert.equal(flow.hops[2].path, `${flow.hops[1].path}/login`);
    assert.match(flow.hops[3].path, /^\/application\/o\/authorize\/[\w-]+$/);
    assert.equal(flow.params.get('state'), flow.state);
    assert.equal(flow.params.get('iss'), op.ready.issuer);

    const tokens = await exchangeCode(op, flow.params.get('code'), flow.verifier);
    assert.equal(tokens.status, 200);
    assert.equal(tokens.body.token_type, 'Bearer');
    assert.equal(tokens.body.scope, 'openid profile email');
    assert.equal(tokens.body.refresh_token, undefined, 'no refresh token without offline_access');

    const { payload, protectedHeader } = await verifyRs256(op, tokens.body.id_token);
    const jwks = await (await fetch(op.discovery.jwks_uri)).json();
    assert.equal(protectedHeader.kid, jwks.keys[0].kid);
    assert.equal(payload.iss, op.ready.issuer);
    assert.equal(payload.aud, CLIENT_ID);
    assert.equal(payload.sub, ADMIN.sub);
    assert.match(payload.sub, /^[0-9a-f]{64}$/);
    assert.notEqual(payload.sub, ADMIN.email);
    assert.equal(payload.nonce, flow.nonce);
    assert.deepEqual(payload.groups, ['portal-admins', 'researchers']);
    assert.equal(payload.preferred_username, 'admin');
    assert.equal(payload.nickname, 'admin');
    assert.equal(payload.name, 'Ana Admin');
    assert.equal(payload.email, 'ana.admin@example.org');
    assert.equal(payload.email_verified, false);
    assert.equal(payload.acr, AUTHENTIK_ACR);
    assert.deepEqual(payload.amr, ['pwd']);
    assert.equal(typeof payload.auth_time, 'number');
    assert.ok(payload.exp - payload.iat === 3600);

    const [authorization] = (await op.events('authorization')).filter((e) => e.state === flow.state);
    assert.equal(authorization.ok, true);
    assert.equal(authorization.sub, ADMIN.sub);
    assert.equal(authorization.code_challenge_method, 'S256');
    assert.equal(authorization.nonce, flow.nonce);
    const tokenEvents = (await op.events('token')).filter((e) => e.sub === ADMIN.sub && e.ok);
    assert.equal(tokenEvents.at(-1).client_auth, 'client_secret_basic');
  });

  test('a replayed authorization code is refused with invalid_grant', async () => {
    const flow = await signIn(op, new Browser(), RESEARCHER);
    const first = await exchangeCode(op, flow.params.get('code'), flow.verifier);
    assert.equal(first.status, 200);
    const replay = await exchangeCode(op, flow.params.get('code'), flow.verifier);
    assert.equal(replay.status, 400);
    assert.equal(replay.body.error, 'invalid_grant');
    const refused = (await op.events('token')).filter((e) => !e.ok);
    assert.equal(refused.at(-1).error, 'invalid_grant');
  });

  test('userinfo answers the access token with the same profile claims, groups included', async () => {
    const { tokens } = await signInAndExchange(op, RESEARCHER);
    const response = await fetch(op.discovery.userinfo_endpoint, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    assert.equal(response.status, 200);
    const claims = await response.json();
    assert.equal(claims.sub, RESEARCHER.sub);
    assert.deepEqual(claims.groups, ['researchers']);
    assert.equal(claims.preferred_username, 'researcher');
    assert.equal(claims.email_verified, false);
    const recorded = (await op.events('userinfo')).at(-1);
    assert.deepEqual([recorded.ok, recorded.sub], [true, RESEARCHER.sub]);
  });

  test('a user in no group gets an empty groups claim', async () => {
    const { tokens } = await signInAndExchange(op, VISITOR);
    const { payload } = await verifyRs256(op, tokens.id_token);
    assert.equal(payload.sub, VISITOR.sub);
    assert.deepEqual(payload.groups, []);
  });

  test('groups come only with the profile scope, there is no groups scope', async () => {
    const { tokens } = await signInAndExchange(op, ADMIN, { scope: 'openid email groups' });
    assert.equal(tokens.scope, 'openid email');
    const { payload } = await verifyRs256(op, tokens.id_token);
    assert.equal(payload.groups, undefined);
    assert.equal(payload.preferred_username, undefined);
    assert.equal(payload.email, ADMIN.email);
  });

  test('client_secret_post is accepted at the token endpoint as well', async () => {
    const flow = await signIn(op, new Browser(), RESEARCHER);
    const tokens = await exchangeCode(op, flow.params.get('code'), flow.verifier, { auth: 'post' });
    assert.equal(tokens.status, 200);
    assert.equal((await op.events('token')).at(-1).client_auth, 'client_secret_post');
  });

  test('a wrong password shows the form again with 401 and records the failure', async () => {
    const browser = new Browser();
    const request = authorizationRequest(op);
    const toInteraction = await browser.request(request.url);
    const interaction = new URL(toInteraction.headers.get('location'), request.url);
    const response = await browser.request(new URL(`${interaction.pathname}/login`, interaction), {
      method: 'POST', form: { username: 'admin', password: 'not-the-password' },
    });
    assert.equal(response.status, 401);
    assert.match(await response.text(), /Invalid username or password/);
    const failure = (await op.events('login')).at(-1);
    assert.deepEqual([failure.ok, failure.username, failure.reason], [false, 'admin', 'invalid_credentials']);
  });

  test('an authorization request without PKCE is sent back with invalid_request', async () => {
    const browser = new Browser();
    const request = authorizationRequest(op, { pkce: false });
    const response = await browser.request(request.url);
    assert.equal(response.status, 303);
    const back = new URL(response.headers.get('location'));
    assert.equal(`${back.origin}${back.pathname}`, REDIRECT_URI);
    assert.equal(back.searchParams.get('error'), 'invalid_request');
    assert.match(back.searchParams.get('error_description'), /requires PKCE/);
    assert.equal(back.searchParams.get('state'), request.state);
  });

  test('an unregistered redirect URI gets an error page, not a redirect', async () => {
    const request = authorizationRequest(op);
    request.url.searchParams.set('redirect_uri', 'http://127.0.0.1:9/elsewhere');
    const response = await new Browser().request(request.url);
    assert.equal(response.status, 400);
    assert.equal(response.headers.get('location'), null);
    assert.match(await response.text(), /<dd id="error">invalid_redirect_uri<\/dd>/);
  });

  test('a second sign-in in the same browser reuses the provider session without the form', async () => {
    const browser = new Browser();
    await signIn(op, browser, RESEARCHER);
    assert.ok(browser.cookieNames().includes('_session'));
    const again = await signIn(op, browser, RESEARCHER);
    assert.deepEqual(again.hops.map(({ method, status }) => `${method} ${status}`), ['GET 303']);
    assert.ok(again.params.get('code'));
  });

  test('logout with id_token_hint ends the provider session, returns to the post-logout URI and is recorded', async () => {
    const browser = new Browser();
    const flow = await signIn(op, browser, ADMIN);
    const tokens = await exchangeCode(op, flow.params.get('code'), flow.verifier);
    const endSession = new URL(op.discovery.end_session_endpoint);
    endSession.search = new URLSearchParams({
      id_token_hint: tokens.body.id_token,
      post_logout_redirect_uri: POST_LOGOUT_REDIRECT_URI,
      state: 'logout-state',
    });

    const confirmPage = await browser.request(endSession);
    assert.equal(confirmPage.status, 200);
    const { action, fields } = formOf(await confirmPage.text());
    assert.equal(action, `${op.origin}/application/o/mirante/end-session/confirm`);
    assert.equal(fields.logout, 'yes');
    assert.ok(fields.xsrf);

    const confirmed = await browser.request(new URL(action), { method: 'POST', form: fields });
    assert.equal(confirmed.status, 303);
    assert.equal(confirmed.headers.get('location'), `${POST_LOGOUT_REDIRECT_URI}?state=logout-state`);

    const reached = (await op.events('end_session')).at(-1);
    assert.equal(reached.ok, true);
    assert.equal(reached.id_token_hint, true);
    assert.equal(reached.sub, ADMIN.sub);
    assert.equal(reached.client_id, CLIENT_ID);
    assert.equal(reached.post_logout_redirect_uri, POST_LOGOUT_REDIRECT_URI);
    assert.equal(reached.state, 'logout-state');
    assert.equal(reached.provider_session, true);
    const done = (await op.events('end_session_confirmed')).at(-1);
    assert.equal(done.redirect_to, `${POST_LOGOUT_REDIRECT_URI}?state=logout-state`);

    const afterLogout = await signIn(op, browser, ADMIN);
    assert.equal(afterLogout.hops[1].status, 200, 'the login form is shown again');
  });

  test('an unregistered post-logout redirect URI is refused and recorded', async () => {
    const { tokens } = await signInAndExchange(op, RESEARCHER);
    const endSession = new URL(op.discovery.end_session_endpoint);
    endSession.search = new URLSearchParams({
      id_token_hint: tokens.id_token,
      post_logout_redirect_uri: 'http://127.0.0.1:9/not-registered',
    });
    const response = await new Browser().request(endSession);
    assert.equal(response.status, 400);
    const refused = (await op.events('end_session')).at(-1);
    assert.equal(refused.ok, false);
    assert.equal(refused.error, 'invalid_request');
    assert.match(refused.error_description, /post_logout_redirect_uri not registered/);
  });

  test('the events list can be cleared between tests', async () => {
    assert.ok((await op.events()).length > 0);
    const cleared = await fetch(op.ready.events, { method: 'DELETE' });
    assert.equal(cleared.status, 204);
    assert.deepEqual(await op.events(), []);
  });
});

describe('HS256 mode, like an Authentik provider without a signing key', () => {
  let op;
  before(async () => { op = await startProvider(['--hs256']); });
  after(async () => { await op.stop(); });

  test('discovery advertises HS256 and the JWKS is the empty object Authentik serves', async () => {
    assert.equal(op.ready.alg, 'HS256');
    assert.deepEqual(op.discovery.id_token_signing_alg_values_supported, ['HS256']);
    const response = await fetch(op.discovery.jwks_uri);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), {});
  });

  test('the ID token is signed with the client secret and carries the admin\'s groups', async () => {
    const { tokens, nonce } = await signInAndExchange(op, ADMIN);
    assert.equal(decodeProtectedHeader(tokens.id_token).alg, 'HS256');
    const { payload } = await jwtVerify(tokens.id_token, new TextEncoder().encode(CLIENT_SECRET), {
      issuer: op.ready.issuer, audience: CLIENT_ID, algorithms: ['HS256'],
    });
    assert.equal(payload.sub, ADMIN.sub);
    assert.equal(payload.nonce, nonce);
    assert.deepEqual(payload.groups, ['portal-admins', 'researchers']);
    await assert.rejects(
      jwtVerify(tokens.id_token, new TextEncoder().encode('some-other-secret-of-sufficient-length-000000'), { algorithms: ['HS256'] }),
      { code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' },
    );
  });

  test('a replayed code is refused in HS256 mode too', async () => {
    const flow = await signIn(op, new Browser(), RESEARCHER);
    assert.equal((await exchangeCode(op, flow.params.get('code'), flow.verifier)).status, 200);
    const replay = await exchangeCode(op, flow.params.get('code'), flow.verifier);
    assert.equal(replay.body.error, 'invalid_grant');
  });

  test('logout accepts an HS256 id_token_hint', async () => {
    const browser = new Browser();
    const flow = await signIn(op, browser, RESEARCHER);
    const tokens = await exchangeCode(op, flow.params.get('code'), flow.verifier);
    const endSession = new URL(op.discovery.end_session_endpoint);
    endSession.search = new URLSearchParams({
      id_token_hint: tokens.body.id_token, post_logout_redirect_uri: POST_LOGOUT_REDIRECT_URI,
    });
    const page = await browser.request(endSession);
    assert.equal(page.status, 200);
    const { action, fields } = formOf(await page.text());
    const confirmed = await browser.request(new URL(action), { method: 'POST', form: fields });
    assert.equal(confirmed.headers.get('location'), POST_LOGOUT_REDIRECT_URI);
    const reached = (await op.events('end_session')).at(-1);
    assert.equal(reached.sub, RESEARCHER.sub);
  });
});

describe('knobs for the negative cases', () => {
  test('--hs256-jwks keys serves an empty keys array instead of Authentik\'s {}', async () => {
    const op = await startProvider(['--hs256', '--hs256-jwks', 'keys']);
    try {
      assert.deepEqual(await (await fetch(op.discovery.jwks_uri)).json(), { keys: [] });
    } finally {
      await op.stop();
    }
  });

  test('--id-token-aud yields a validly signed ID token that fails the audience check', async () => {
    const op = await startProvider(['--id-token-aud', 'someone-else']);
    try {
      const { tokens } = await signInAndExchange(op, ADMIN);
      await assert.rejects(verifyRs256(op, tokens.id_token), { code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'aud' });
      const { payload } = await verifyRs256(op, tokens.id_token, { audience: 'someone-else' });
      assert.equal(payload.sub, ADMIN.sub);
    } finally {
      await op.stop();
    }
  });

  test('--id-token-ttl 1 yields an ID token that is expired a second later', async () => {
    const op = await startProvider(['--id-token-ttl', '1']);
    try {
      const { tokens } = await signInAndExchange(op, RESEARCHER);
      // Checked as of its issue time: with a one-second lifetime the token may already have
      // expired by the time the exchange returns on a busy machine.
      const issuedAt = decodeJwt(tokens.id_token).iat;
      const { payload } = await verifyRs256(op, tokens.id_token, { currentDate: new Date(issuedAt * 1000) });
      assert.equal(payload.exp - payload.iat, 1);
      await new Promise((resolve) => { setTimeout(resolve, payload.exp * 1000 - Date.now() + 1100); });
      await assert.rejects(verifyRs256(op, tokens.id_token), { code: 'ERR_JWT_EXPIRED' });
    } finally {
      await op.stop();
    }
  });

  test('the provider exits with status 0 on SIGTERM', async () => {
    const op = await startProvider();
    assert.deepEqual(await op.stop(), { code: 0, signal: null });
  });

  test('--log-events prints each event as a JSON line after the readiness line', async () => {
    const child = spawn(process.execPath, [
      PROVIDER, '--port', '0', '--redirect-uri', REDIRECT_URI, '--log-events',
    ], { stdio: ['ignore', 'pipe', 'ignore'] });
    running.add(child);
    const lines = readline.createInterface({ input: child.stdout });
    const iterator = lines[Symbol.asyncIterator]();
    const ready = JSON.parse((await iterator.next()).value);
    assert.equal(ready.event, 'ready');
    const failed = await fetch(`${new URL(ready.issuer).origin}/application/o/token/`, {
      method: 'POST', headers: { accept: 'application/json' },
    });
    assert.equal(failed.status, 400);
    const logged = JSON.parse((await iterator.next()).value);
    assert.deepEqual([logged.event, logged.ok, logged.error], ['token', false, 'invalid_request']);
    child.kill('SIGTERM');
    assert.equal((await once(child, 'exit'))[0], 0);
    running.delete(child);
  });

  test('settings come from the environment too, and --exit-with-stdin exits when stdin closes', async () => {
    const child = spawn(process.execPath, [PROVIDER], {
      stdio: ['pipe', 'pipe', 'ignore'],
      env: {
        ...process.env,
        OIDC_TEST_PORT: '0',
        OIDC_TEST_SLUG: 'portal',
        OIDC_TEST_REDIRECT_URIS: `${REDIRECT_URI} http://127.0.0.1:9/other`,
        OIDC_TEST_HS256: '1',
        OIDC_TEST_EXIT_WITH_STDIN: '1',
      },
    });
    running.add(child);
    const exited = once(child, 'exit');
    // The async iterator buffers lines, so the readiness line cannot be missed between two
    // listeners; a provider that exits first ends the iteration instead of hanging it.
    const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const first = await lines.next();
    assert.equal(first.done, false, 'the provider printed its readiness line');
    const ready = JSON.parse(first.value);
    assert.match(ready.issuer, /\/application\/o\/portal\/$/);
    assert.equal(ready.alg, 'HS256');
    const discovery = await (await fetch(ready.discovery)).json();
    assert.equal(discovery.end_session_endpoint, `${new URL(ready.issuer).origin}/application/o/portal/end-session/`);
    child.stdin.end();
    assert.deepEqual(await exited, [0, null]);
    running.delete(child);
  });

  test('the provider refuses to start without a redirect URI', async () => {
    const child = spawn(process.execPath, [PROVIDER, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    const [code] = await once(child, 'exit');
    assert.equal(code, 2);
    assert.match(stderr, /at least one --redirect-uri is required/);
  });
});
