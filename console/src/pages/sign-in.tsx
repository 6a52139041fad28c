import { useEffect, useState } from 'preact/hooks';
import { requestToken } from '../api.js';
import { signIn, signOutNotice } from '../session.js';

export function SignIn() {
  const [clientId, setClientId] = useState('');
  const [secret, setSecret] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const notice = signOutNotice();
  // When the form can be used, for the browser tests' timing (performance.getEntriesByName).
  useEffect(() => void performance.mark('console:sign-in-ready'), []);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      signIn(await requestToken(clientId.trim(), secret));
    } catch (err) {
      setError((err as Error).message);
      setBusy(false);
    }
  };

  return (
    <main id="main" class="sign-in">
      <h1>site-monitor</h1>
      <p class="muted">Sign in with your API client's credentials.</p>
      {notice && (
        <p class="notice" role="alert">
          {notice}
        </p>
      )}
      <form onSubmit={submit}>
        <label for="client-id">Client ID</label>
        <input
          id="client-id"
          name="clientId"
          autoComplete="username"
          required
          maxLength={200}
          value={clientId}
          onInput={(e) => setClientId(e.currentTarget.value)}
        />
        <label for="client-secret">Client secret</label>
        <input
          id="client-secret"
          name="clientSecret"
          type="password"
          autoComplete="current-password"
          required
          maxLength={500}
          value={secret}
          onInput={(e) => setSecret(e.currentTarget.value)}
        />
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
