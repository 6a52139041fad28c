import { useEffect, useRef, useState } from 'preact/hooks';
import { call, post } from './api.js';
import type { Ticket } from './api-schema.js';
import { formatTime } from './format.js';
import { Status, useLoad } from './load.js';

// A ticket opened on the tickets page: its change history and its images as thumbnails.

const DAY = 86_400_000;

export function TicketDetails({ ticket: t }: { ticket: Ticket }) {
  const changes = useLoad(
    (signal) => {
      // Changes follow the ticket; the route reads at most 60 days at a time.
      const start = Date.parse(t.TransactionDate) - DAY;
      return post(
        '/v1/transactions/change-logs',
        {
          start: new Date(start).toISOString(),
          end: new Date(start + 60 * DAY).toISOString(),
          filters: { siteIds: [t.SiteID], ticketNums: [t.TicketNumber] },
        },
        signal,
      );
    },
    [t.TransactionID],
  );
  const images = [
    ...t.TicketImageIDs.map((uuid) => ({ uuid, kind: 'tickets', label: 'Ticket image' })),
    ...(t.MotionCaptureImageIDs ?? []).map((uuid) => ({
      uuid,
      kind: 'motion-capture',
      label: 'Motion capture',
    })),
  ];
  return (
    <div class="details">
      <h3>Images of ticket {t.TicketNumber}</h3>
      {images.length ? (
        <ul class="thumbs">
          {images.map((m, i) => (
            <li key={m.uuid}>
              <Thumb
                path={`/v1/images/${m.kind}/${m.uuid}`}
                alt={`${m.label} ${i + 1} of ticket ${t.TicketNumber}`}
              />
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">No images.</p>
      )}
      {t.Notes && <p>Notes: {t.Notes}</p>}
      <h3>Change history</h3>
      <Status load={changes} what="the change history">
        {(list) =>
          list.length ? (
            <ul class="changes">
              {list.map((c, i) => (
                <li key={i}>
                  {formatTime(c.ChangeDate)} · {c.Editor} ({c.EditorCompany}) · {c.LogTypeName}
                  <ul>
                    {c.ChangeItems.map((item, j) => (
                      <li key={j}>
                        {item.PropertyName}: {item.OriginalValue || '(empty)'} →{' '}
                        {item.NewValue || '(empty)'}
                      </li>
                    ))}
                  </ul>
                </li>
              ))}
            </ul>
          ) : (
            <p class="muted">No changes recorded.</p>
          )
        }
      </Status>
    </div>
  );
}

/** An image fetched with the token (an <img src> cannot send it), shown small; a click shows it large. */
function Thumb({ path, alt }: { path: string; alt: string }) {
  const [url, setUrl] = useState<string>();
  const [error, setError] = useState('');
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const ctl = new AbortController();
    let made: string | undefined;
    call(path, { accept: 'image/*', signal: ctl.signal })
      .then((res) => res.blob())
      .then((blob) => setUrl((made = URL.createObjectURL(blob))))
      .catch((err: Error) => !ctl.signal.aborted && setError(err.message));
    return () => {
      ctl.abort();
      if (made) URL.revokeObjectURL(made);
    };
  }, [path]);
  if (error)
    return (
      <span class="error">
        {alt}: {error}
      </span>
    );
  if (!url) return <span class="thumb loading">Loading…</span>;
  return (
    <>
      <button
        type="button"
        class="thumb"
        onClick={() => dialog.current?.showModal()}
        aria-label={`Open ${alt}`}
      >
        <img src={url} alt={alt} />
      </button>
      <dialog ref={dialog} aria-label={alt}>
        <img src={url} alt={alt} class="large" />
        <form method="dialog">
          <button type="submit">Close</button>
        </form>
      </dialog>
    </>
  );
}
