/**
 * Chat templates (https://huggingface.co/docs/transformers/main/en/chat_templating): the Jinja
 * template a tokenizer_config.json carries (`chat_template`, or a `chat_template.jinja` file beside
 * it), rendered with `@huggingface/jinja` with the variables transformers' `apply_chat_template`
 * passes: `messages`, `add_generation_prompt`, `bos_token`, `eos_token` (plus any extras).
 *
 * Many templates begin with `bos_token`; the pipeline adds BOS itself (`encodePromptCompletion`),
 * so a prompt for it is rendered with `bosToken: ''` (or the leading BOS id dropped after encode).
 * Not a tokenizer: the result is text.
 */
import { Template } from '@huggingface/jinja';

interface ChatMessage {
  role: string;
  content: string;
}

interface ChatTemplateOptions {
  /** End with the opening of an assistant turn (transformers' `add_generation_prompt`). Default false. */
  addGenerationPrompt?: boolean;
  /** The text of BOS (`<s>`) as the template sees it. Default ''. */
  bosToken?: string;
  /** The text of EOS (`</s>`). Default ''. */
  eosToken?: string;
  /** Further variables the template reads (`tools`, `date_string`, ...). */
  extra?: Record<string, unknown>;
}

/** Parses a template; a syntax error is thrown with the parser's message. */
export function parseChatTemplate(template: string): Template {
  return new Template(template);
}

export function applyChatTemplate(
  template: string | Template,
  messages: readonly ChatMessage[],
  options: ChatTemplateOptions = {},
): string {
  const t = typeof template === 'string' ? parseChatTemplate(template) : template;
  return t.render({
    ...options.extra,
    messages: messages.map((m) => ({ ...m })),
    add_generation_prompt: options.addGenerationPrompt ?? false,
    bos_token: options.bosToken ?? '',
    eos_token: options.eosToken ?? '',
  });
}

/**
 * The template a `chat_template` field holds: a string, or (older tokenizer_config.json files) a
 * list of `{name, template}` of which transformers uses the one named `default`. Undefined when
 * absent; a string describing the problem when the field has another shape.
 */
export function selectChatTemplate(
  field: unknown,
): { ok: true; template: string | undefined } | { ok: false; reason: string } {
  if (field === undefined || field === null) return { ok: true, template: undefined };
  if (typeof field === 'string') return { ok: true, template: field };
  if (Array.isArray(field)) {
    const named = field as { name?: unknown; template?: unknown }[];
    const d = named.find((x) => x && x.name === 'default');
    if (d && typeof d.template === 'string') return { ok: true, template: d.template };
    return {
      ok: false,
      reason:
        `a list of ${named.length} named templates without one named 'default' (names: ` +
        `${named.map((x) => JSON.stringify(x?.name)).join(', ')}); expected a string or a list with a ` +
        `'default' template`,
    };
  }
  return { ok: false, reason: `got ${typeof field}; expected a string or a list of {name, template}` };
}
