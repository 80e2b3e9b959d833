/** A key as one JSON Pointer token (RFC 6901: `~` → `~0`, `/` → `~1`), e.g. an annotation in a JSON patch path. */
export const escapeJsonPointer = (k: string): string => k.replace(/~/g, '~0').replace(/\//g, '~1');
