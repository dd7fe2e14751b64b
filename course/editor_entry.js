// The exercises' editor: CodeMirror 6, bundled by the build (course/editor_bundle.py) into one
// module that the page loads only when an exercise comes near the viewport.
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";
import { bracketMatching, indentOnInput, indentUnit, syntaxHighlighting } from "@codemirror/language";
import { EditorState } from "@codemirror/state";
import { classHighlighter } from "@lezer/highlight";
import { drawSelection, EditorView, highlightSpecialChars, keymap, lineNumbers } from "@codemirror/view";

/**
 * An editor in `parent` holding `doc`. `onChange(text)` after every edit, `onRun()` on
 * Ctrl/Cmd+Enter. Tab indents; Esc then Tab leaves the editor (CodeMirror's own escape,
 * which the block states beside the editor). `label` names it for screen readers.
 */
export function createEditor(parent, { doc, label, onChange, onRun }) {
  const run = () => {
    onRun();
    return true;
  };
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc,
      extensions: [
        lineNumbers(),
        highlightSpecialChars(),
        history(),
        drawSelection(),
        indentOnInput(),
        bracketMatching(),
        // tok-* classes, coloured by exercise.css with Material's code colours (both palettes).
        syntaxHighlighting(classHighlighter),
        indentUnit.of("    "),
        python(),
        EditorView.lineWrapping, // no sideways scrolling: a 375 px phone shows every line whole
        keymap.of([{ key: "Mod-Enter", run }, indentWithTab, ...defaultKeymap, ...historyKeymap]),
        // Phones: no capital letter or "correction" forced into code.
        EditorView.contentAttributes.of({
          "aria-label": label,
          autocapitalize: "off",
          autocorrect: "off",
          autocomplete: "off",
          spellcheck: "false",
        }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) onChange(update.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    view,
    get text() {
      return view.state.doc.toString();
    },
    set text(value) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: value } });
    },
    focus: () => view.focus(),
  };
}
