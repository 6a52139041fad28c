import type {
  ContextConfigDefault,
  FastifyBaseLogger,
  FastifyInstance,
  FastifySchema,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
  RouteHandlerMethod,
} from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Settings } from './settings.js';
import type { Database } from './db/index.js';
import type { TokenService } from './auth/tokens.js';
import type { StreamService } from './stream/service.js';
import type { TelemetryService } from './telemetry/service.js';
import type { AlarmRulesService } from './alarms/rules/service.js';
import type { MqttService } from './mqtt/service.js';

// The typed Fastify instance every route file takes, and what the app decorates it with. Routes
// import this file, never app.ts, so the app can import the routes without a cycle.

export type FastifyTypebox = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/**
 * A route handler declared apart from its route, typed by the route's schema S as an inline one is:
 * the request's body, params and querystring, and what it may send or return.
 */
export type TypedHandler<S extends FastifySchema> = RouteHandlerMethod<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  RouteGenericInterface,
  ContextConfigDefault,
  S,
  TypeBoxTypeProvider
>;

declare module 'fastify' {
  interface FastifyInstance {
    db: Database;
    settings: Settings;
    tokens: TokenService;
    stream: StreamService;
    telemetry: TelemetryService;
    /** The MQTT client side (contract 14); undefined without MQTT_URL. */
    mqtt: MqttService | undefined;
    /** Limit rules and communication loss (contract 16). */
    alarmRules: AlarmRulesService;
  }
}
