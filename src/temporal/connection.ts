import { Client, Connection } from '@temporalio/client';
import { SearchAttributeType } from '@temporalio/common';
import proto from '@temporalio/proto';
import type { Config } from '../config.ts';
import { SearchAttributes } from './search-attributes.ts';

const ALREADY_EXISTS = 6; // gRPC status code

export interface Temporal {
  connection: Connection;
  client: Client;
}

export async function connectTemporal(config: Pick<Config, 'TEMPORAL_ADDRESS' | 'TEMPORAL_NAMESPACE'>): Promise<Temporal> {
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  return { connection, client: new Client({ connection, namespace: config.TEMPORAL_NAMESPACE }) };
}

/**
 * A client that connects on first use and reconnects by itself: the api starts, and serves what does not need
 * Temporal, while Temporal is unreachable. Calls fail until it is back (callers hand their work off meanwhile).
 */
export function lazyTemporal(config: Pick<Config, 'TEMPORAL_ADDRESS' | 'TEMPORAL_NAMESPACE'>): Temporal {
  const connection = Connection.lazy({ address: config.TEMPORAL_ADDRESS });
  return { connection, client: new Client({ connection, namespace: config.TEMPORAL_NAMESPACE }) };
}

/** Registers the platform's custom search attributes that the namespace lacks (idempotent). */
export async function ensureSearchAttributes(connection: Connection, namespace: string): Promise<string[]> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = Object.values(SearchAttributes).filter((key) => !(key.name in (customAttributes ?? {})));
  if (missing.length === 0) return [];
  const { IndexedValueType } = proto.temporal.api.enums.v1;
  const indexedType = (type: SearchAttributeType) =>
    type === SearchAttributeType.KEYWORD_LIST ? IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST : IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
  try {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((key) => [key.name, indexedType(key.type)])),
    });
  } catch (err) {
    // Another process registered them between our list and add.
    if ((err as { code?: number }).code !== ALREADY_EXISTS) throw err;
  }
  return missing.map((key) => key.name);
}
