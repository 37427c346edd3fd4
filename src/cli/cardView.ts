import type { AgentGraph } from '../observe/graph';

/**
 * What `lango agents --url` can say of any A2A node from its agent card
 * alone (a node that is not lango has no catalog): its name, description,
 * interfaces and skills. Read field by field from the card, v1.0 or v0.3;
 * a field of the wrong type is left out, never trusted.
 */
export interface CardView {
  name: string;
  description: string;
  version?: string;
  /** `JSONRPC 1.0 http://…` per interface (v1.0 `supportedInterfaces`, v0.3 `url` + `additionalInterfaces`). */
  interfaces: string[];
  streaming?: boolean;
  skills: { name: string; description: string; tags: string[] }[];
}

/** The most skills and interfaces shown of one card. */
const MAX_LISTED = 100;

const text = (value: unknown, max = 2_000): string | undefined =>
  typeof value === 'string' ? value.slice(0, max) : undefined;

const list = (value: unknown): unknown[] => (Array.isArray(value) ? value.slice(0, MAX_LISTED) : []);

const record = (value: unknown): Record<string, unknown> =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/** The card as a {@link CardView}; undefined when it is not an agent card (no name). */
export function cardView(card: unknown): CardView | undefined {
  const fields = record(card);
  const name = text(fields.name, 200);
  if (!name) return undefined;
  const described = (...parts: (string | undefined)[]) => parts.filter(Boolean).join(' ');
  const interfaces = list(fields.supportedInterfaces).map((entry) => {
    const i = record(entry);
    return described(text(i.protocolBinding, 40), text(i.protocolVersion, 20), text(i.url, 500));
  });
  // v0.3: the main interface is the card's own url, the others are additionalInterfaces.
  const url = text(fields.url, 500);
  if (url)
    interfaces.push(described(text(fields.preferredTransport, 40) ?? 'JSONRPC', text(fields.protocolVersion, 20), url));
  for (const entry of list(fields.additionalInterfaces)) {
    const i = record(entry);
    interfaces.push(described(text(i.transport, 40), text(i.url, 500)));
  }
  const streaming = record(fields.capabilities).streaming;
  return {
    name,
    description: text(fields.description) ?? '',
    ...(text(fields.version, 100) ? { version: text(fields.version, 100) } : {}),
    interfaces: [...new Set(interfaces.filter((line) => line.length > 0))],
    ...(typeof streaming === 'boolean' ? { streaming } : {}),
    skills: list(fields.skills).flatMap((entry) => {
      const skill = record(entry);
      const skillName = text(skill.name, 200) ?? text(skill.id, 200);
      if (!skillName) return [];
      const tags = list(skill.tags).flatMap((tag) => (typeof tag === 'string' ? [tag.slice(0, 100)] : []));
      return [{ name: skillName, description: text(skill.description) ?? '', tags }];
    }),
  };
}

/** The card as lines a person reads: name, what the node is, its interfaces and skills. */
export function renderCardView(view: CardView, url: string, why: string): string[] {
  const lines = [`${view.name} (A2A node at ${url}; no lango catalog: ${why})`];
  if (view.description) lines.push(`  ${view.description}`);
  const about = [
    view.version && `version ${view.version}`,
    view.streaming !== undefined && `streaming ${view.streaming ? 'yes' : 'no'}`,
  ];
  if (about.some(Boolean)) lines.push(`  ${about.filter(Boolean).join('; ')}`);
  lines.push(view.interfaces.length ? 'interfaces:' : 'interfaces: none declared');
  for (const line of view.interfaces) lines.push(`  ${line}`);
  lines.push(view.skills.length ? 'skills:' : 'skills: none declared');
  for (const skill of view.skills) {
    lines.push(`  ${skill.name}${skill.tags.length ? ` [${skill.tags.join(', ')}]` : ''}`);
    if (skill.description) lines.push(`    ${skill.description}`);
  }
  return lines;
}

/** The card as a picture: the node and its skills under it. */
export function cardGraph(view: CardView): AgentGraph {
  return {
    root: view.name,
    agents: view.skills.map((skill) => ({ name: skill.name, kind: 'llm', detail: skill.tags })),
  };
}
