import { useRef, type KeyboardEvent } from 'react';

const MAX_LENGTH = 8000;

/**
 * The message box: Enter sends, Shift+Enter starts a new line, and an Enter
 * that confirms an IME composition (Chinese, Japanese…) never sends.
 */
export function Composer({
  text,
  onText,
  onSend,
  onStop,
  running,
  canStop,
  disabled,
}: {
  text: string;
  onText(text: string): void;
  onSend(): void;
  onStop(): void;
  running: boolean;
  canStop: boolean;
  disabled: boolean;
}) {
  const composing = useRef(false);
  const sendable = !running && !disabled && text.trim().length > 0;

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key !== 'Enter' || event.shiftKey) return;
    // keyCode 229: the key went to the IME (Safari sends the confirming Enter after compositionend).
    if (event.nativeEvent.isComposing || event.keyCode === 229 || composing.current) return;
    event.preventDefault();
    if (sendable) onSend();
  };

  return (
    <form
      className="composer"
      onSubmit={(event) => {
        event.preventDefault();
        if (sendable) onSend();
      }}
    >
      <label htmlFor="composer-message" className="visually-hidden">
        Message
      </label>
      <textarea
        id="composer-message"
        value={text}
        rows={2}
        maxLength={MAX_LENGTH}
        placeholder="Ask about the knowledge base… (Enter sends, Shift+Enter for a new line)"
        onChange={(event) => onText(event.target.value)}
        onKeyDown={onKeyDown}
        onCompositionStart={() => (composing.current = true)}
        onCompositionEnd={() => (composing.current = false)}
      />
      <div className="composer-actions">
        {running && (
          <button type="button" className="danger" onClick={onStop} disabled={!canStop}>
            Stop
          </button>
        )}
        <button type="submit" className="primary" disabled={!sendable}>
          Send
        </button>
      </div>
    </form>
  );
}
