import nodemailer, { type Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import type { Attempt } from './types.js';

// Email notifications (contract 16) through SMTP_URL with nodemailer: one message per
// notification. A 5xx answer of the server fails it; anything else that goes wrong (connection,
// 4xx) is retried. What this returns never holds the URL (its password).

export interface Mail {
  to: string[];
  subject: string;
  text: string;
}

export class Mailer {
  private readonly transport: Transporter;

  constructor(
    smtpUrl: string,
    private readonly from: string,
  ) {
    this.transport = nodemailer.createTransport({
      url: smtpUrl,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 10_000,
    } as SMTPTransport.Options);
  }

  async send(mail: Mail): Promise<Attempt> {
    try {
      await this.transport.sendMail({ from: this.from, ...mail });
      return { result: 'delivered' };
    } catch (err) {
      const code = (err as { responseCode?: number }).responseCode;
      if (code !== undefined && code >= 500)
        return { result: 'failed', reason: `SMTP server answered ${code}` };
      return {
        result: 'retry',
        reason: code !== undefined ? `SMTP server answered ${code}` : 'SMTP connection failed',
      };
    }
  }

  close(): void {
    this.transport.close();
  }
}
