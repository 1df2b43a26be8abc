/**
 * The last lines of a node's newest kept serial console, in its explain panel (explain's consoleTail):
 * a failed node's kernel panic or dracut timeout at a glance, and the way to the whole console. The
 * API answers null when the caller may not read consoles (a viewer unless the option consoleViewers
 * is on, a tenant) and [] when none is kept (docs/consoles.md); either shows nothing.
 */
import { Link } from 'wouter';

/** The last this many of the API's (up to 20) lines. */
const SHOWN = 10;

export function ConsoleTail({ id, lines }: { id: string; lines: readonly string[] | null | undefined }) {
  if (!lines?.length) return null;
  const shown = lines.slice(-SHOWN);
  return (
    <figure className="consoletail" data-testid="console-tail">
      <figcaption>
        <b>Console</b>, its last {shown.length} lines (<Link href={`/node/${id}/console`}>the whole console</Link>):
      </figcaption>
      <pre>{shown.join('\n')}</pre>
    </figure>
  );
}
