import type { EntityData, EntityManager, EntityName, EntityProperty } from '@mikro-orm/postgresql';

/**
 * Runs a statement the request path runs at every request. Outside a transaction it is a named prepared statement on
 * the ORM's own pool: each connection parses and plans it once, where the ORM's `execute` sends it unnamed, parsed and
 * planned at every call (measured on this machine: a holder read 0.40 ms against 0.20 ms, half of it CPU; 13% more
 * `settle_tev` postings per second). Inside a transaction it runs on that transaction's connection.
 *
 * `text` takes PostgreSQL's `$1`, `$2`… each once and in order, as the ORM's `?` would be.
 */
export async function queryPrepared<R>(em: EntityManager, name: string, text: string, values: unknown[]): Promise<R[]> {
  const ctx = em.getTransactionContext();
  if (ctx) return em.getConnection().execute<R[]>(text.replace(/\$\d+/g, '?'), values, 'all', ctx);
  const pool = await em.getConnection().getNativeClient();
  return (await pool.query({ name, text, values })).rows as R[];
}

/** What `entityColumns` listed, by entity and alias: the request path asks for the same lists at every request. */
const listedColumns = new Map<EntityName, Map<string, string>>();

/**
 * The columns an entity maps, for a prepared statement that reads its rows to `em.map` them: listed, not `*`, so that a
 * column a later migration adds does not change the statement's result, which a prepared statement refuses until its
 * connection closes (`cached plan must not change result type`). Formulas are left to the statement. Listed once per
 * entity and alias: the entities' mapping does not change while the process runs.
 */
export function entityColumns(em: EntityManager, entity: EntityName, alias: string): string {
  let byAlias = listedColumns.get(entity);
  if (byAlias === undefined) listedColumns.set(entity, (byAlias = new Map()));
  const known = byAlias.get(alias);
  if (known !== undefined) return known;
  const columns = em
    .getMetadata()
    .get(entity)
    .props.filter((prop) => !prop.formula && prop.persist !== false && prop.fieldNames?.length)
    .flatMap((prop) => prop.fieldNames.map((field) => `${alias}.${field}`))
    .join(', ');
  byAlias.set(alias, columns);
  return columns;
}

/** What `readOnlyEntity` converts and hides, by entity: the mapping does not change while the process runs. */
const readOnlyMappings = new Map<EntityName, { converted: EntityProperty[]; hidden: string[] }>();

/**
 * A row read with `entityColumns` as its entity's values, converted as `em.map` converts them (the ORM's column
 * mapping, then each custom type's), without making it managed. A read on the request path is only read; merging it
 * into the ORM's identity map was 12.6% of the api's CPU on a Pix payment (bench/README.md). Hidden properties (a
 * holder's hashes) stay out of its JSON, as they do out of the entity's. Nothing written to it reaches the database:
 * a use case that changes the row writes it with its own update.
 */
export function readOnlyEntity<T extends object>(em: EntityManager, entity: EntityName<T>, row: Record<string, unknown>): T {
  const meta = em.getMetadata().get(entity);
  let mapping = readOnlyMappings.get(entity);
  if (mapping === undefined) {
    mapping = { converted: meta.props.filter((prop) => prop.customType), hidden: meta.props.filter((prop) => prop.hidden).map((prop) => prop.name) };
    readOnlyMappings.set(entity, mapping);
  }
  const values = em.getDriver().mapResult(row as EntityData<T>, meta) as Record<string, unknown>;
  const platform = em.getPlatform();
  for (const prop of mapping.converted) {
    const value = values[prop.name];
    if (value !== null && value !== undefined) values[prop.name] = prop.customType!.convertToJSValue(value, platform);
  }
  for (const name of mapping.hidden) Object.defineProperty(values, name, { enumerable: false });
  return values as T;
}
