/** What one attempt at delivering a notification came to. `reason` never holds a secret. */
export type Attempt =
  | { result: 'delivered' }
  | { result: 'retry'; reason: string }
  | { result: 'failed'; reason: string };

export type NotificationEvent = 'raised' | 'escalated' | 'repeated' | 'resolved';
export type ChannelType = 'webhook' | 'email';
