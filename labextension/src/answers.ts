/**
 * What an answer of the server says when it is not what was asked for: the message of a
 * refusal, the field it names. A server without jupyter_recall (not installed, not enabled, or
 * its loading failed: the server's log says why) answers every route with its HTML 404 page.
 */

/** The parts of an HTTP answer read here. */
export interface IAnswer {
  status: number;
  statusText: string;
  contentType: string;
  text: string;
}

export interface IRefusal {
  message: string;
  field?: string;
}

export const NOT_LOADED =
  'the jupyter_recall server extension does not answer on this server (HTTP 404): is it ' +
  "installed and enabled? The server's log says why it did not load.";

/** The JSON body of an answer, or null (empty, or not JSON: a proxy's or the server's HTML). */
export function answerBody(answer: IAnswer): unknown {
  if (!answer.text || !answer.contentType.includes('json')) {
    return null;
  }
  try {
    return JSON.parse(answer.text);
  } catch {
    return null;
  }
}

/** Why a request was refused, in words a user can act on. */
export function refusal(answer: IAnswer): IRefusal {
  const body = answerBody(answer) as { message?: unknown; field?: unknown } | null;
  if (body && typeof body.message === 'string') {
    return typeof body.field === 'string'
      ? { message: body.message, field: body.field }
      : { message: body.message };
  }
  if (answer.status === 404) {
    return { message: NOT_LOADED };
  }
  return { message: `HTTP ${answer.status} ${answer.statusText}`.trim() };
}
