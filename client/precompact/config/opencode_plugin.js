// precompact's plugin for OpenCode, written by `precompact install --agent opencode`.
//
// It hands each compaction to `precompact hook --agent opencode`, started by the command line
// below: precompact's Python by absolute path, isolated (-I: no PYTHONPATH or other PYTHON*
// variable of OpenCode's environment read, no folder of the project's on its path), running
// precompact's script by absolute path (never a command from the project or from PATH), and
// gives the model precompact's brief after a compaction. It never blocks OpenCode longer than the
// hook's budget for that event, goes on whatever fails (precompact logs its own failures in the
// project's logs/precompact-errors.log), shows the user what the hook says for them, and reads
// nothing from the project. `precompact uninstall --agent opencode` removes this file.
import { spawn } from "node:child_process";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import { isMainThread } from "node:worker_threads";

const PRECOMPACT = "__PRECOMPACT__";
// Milliseconds each event may take before the hook is stopped and OpenCode goes on.
const BUDGET_MS = { PreCompact: 60000, PostCompact: 15000, SessionStart: 30000, UserPromptSubmit: 15000 };
// What the summary left out is computed by precompact's worker after the compaction: until it
// is there, the plugin asks again at most once every ASK_AGAIN_MS, at most MAX_ASKS times per
// compaction and OpenCode process, and never on a request otherwise (a hook asked with nothing
// pending answers after three stats, but it is still a process).
const ASK_AGAIN_MS = 5000;
const MAX_ASKS = 12;
const MAX_ANSWER_CHARS = 1 << 20;
// What the hook says for the user: a stdout answer's `systemMessage`, and its stderr lines that
// are precompact's word to the user (a configuration not approved: "precompact did nothing: ...";
// a failed save: "precompact: nothing saved ..."), not the hook's own diagnostics ("precompact
// hook: ...", such as "not a precompact project" in every other directory).
const FOR_THE_USER = /^precompact(:| did nothing:) /;
const MAX_NOTICE_CHARS = 1000;
// A precompact that cannot start (its Python gone: a spawn error; any exit status but 0 with no
// answer, as `precompact hook` exits 0 once it answered: its script gone, Python's 2; a Python of
// another version that cannot import it, 1; 126, 127; a signal, the plugin's own budget, is not)
// is said once per session, with the install that mends it for the scope this file was installed
// in (the project's .opencode/plugin/, else the user's).
function notStarted(directory) {
  const scope = fileURLToPath(import.meta.url).startsWith(join(directory, ".opencode") + "/") ? "project" : "user";
  return (
    `precompact: its hook could not start (${PRECOMPACT[PRECOMPACT.length - 1]} is missing or broken), so this session ` +
    `is not being saved; run \`precompact install --agent opencode --scope ${scope}\` with the precompact you use`
  );
}
const TOAST_MS = 15000;

// Where OpenCode keeps its sessions (what it reads itself: $XDG_DATA_HOME, else ~/.local/share).
function database() {
  const dataHome = process.env.XDG_DATA_HOME;
  const base = dataHome && isAbsolute(dataHome) ? dataHome : join(homedir(), ".local", "share");
  return join(base, "opencode", "opencode.db");
}

// Runs the hook for `event` with the event's fields on stdin; resolves to its stdout and stderr
// (both "" on any failure or when the budget runs out), and whether precompact could not start.
function hook(event, fields, cwd) {
  return new Promise((resolve) => {
    let out = "";
    let err = "";
    let done = false;
    let timer;
    const finish = (answer) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(answer);
    };
    const nothing = { out: "", err: "" };
    const notStarting = { out: "", err: "", notStarted: true };
    let child;
    try {
      child = spawn(PRECOMPACT[0], [...PRECOMPACT.slice(1), "hook", "--agent", "opencode"], {
        cwd,
        stdio: ["pipe", "pipe", "pipe"],
      });
    } catch {
      finish(notStarting);
      return;
    }
    timer = setTimeout(() => {
      child.kill("SIGKILL");
      finish(nothing);
    }, BUDGET_MS[event]);
    child.on("error", () => finish(notStarting));
    child.stdout.on("data", (data) => {
      if (out.length < MAX_ANSWER_CHARS) out += data;
    });
    child.stderr.on("data", (data) => {
      if (err.length < MAX_ANSWER_CHARS) err += data;
    });
    child.on("close", (code) =>
      finish(code !== null && code !== 0 && code < 128 && out === "" ? notStarting : { out, err }),
    );
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify({ hook_event_name: event, cwd, transcript_path: database(), ...fields }));
  });
}

// What of PreCompact's answer the summariser may read: its plain words. An answer that is a JSON
// object is for the user (a `systemMessage`: a failure, a configuration not approved, which
// names `precompact trust`), never for the model.
function noteOf(answer) {
  const text = answer.trim();
  try {
    const value = JSON.parse(text);
    if (value !== null && typeof value === "object") return "";
  } catch {
    // plain words
  }
  return text;
}

// The lines the hook's answer has for the user, each on one line of printable characters.
function noticesOf(answer, directory) {
  const said = answer.notStarted ? [notStarted(directory)] : answer.err.split("\n").filter((line) => FOR_THE_USER.test(line));
  try {
    const message = JSON.parse(answer.out).systemMessage;
    if (typeof message === "string") said.push(message);
  } catch {
    // no JSON answer, no message
  }
  return said.map((line) => line.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, " ").trim().slice(0, MAX_NOTICE_CHARS));
}

// Shows `text` to the user. OpenCode shows a plugin nothing of a child's stderr or of a
// `systemMessage`; its TUI shows a toast, and runs plugins in a worker thread while it draws on
// the terminal (a line written there would land in its screen). Where no TUI draws (`opencode
// run`, `opencode serve`: plugins run on OpenCode's main thread), no toast is shown, and the line
// goes to OpenCode's stderr.
function show(client, text) {
  if (isMainThread) {
    try {
      process.stderr.write(`${text}\n`);
    } catch {
      // nowhere to write: the toast still goes
    }
  }
  try {
    const body = { title: "precompact", message: text, variant: "warning", duration: TOAST_MS };
    Promise.resolve(client.tui.showToast({ body })).catch(() => {});
  } catch {
    // no TUI client in this OpenCode: the line above is all
  }
}

// The text in the hook's answer to SessionStart or UserPromptSubmit ("" when there is none).
function briefOf(answer) {
  try {
    const context = JSON.parse(answer).hookSpecificOutput.additionalContext;
    return typeof context === "string" ? context : "";
  } catch {
    return "";
  }
}

export const Precompact = async ({ directory, client }) => {
  // The brief of each compaction (by its part's id): its first part, asked for once per OpenCode
  // process, and what the summary left out, asked for until it comes (within the bounds above).
  const briefs = new Map();
  // The sessions this process compacted: what their summary left out cannot be ready at the
  // first request after it (the worker computes it once the summary is known), so it is first
  // asked for ASK_AGAIN_MS after that request, however long the summary took.
  const compactedHere = new Set();
  // What was shown to the user, per session: each notice once per session and OpenCode process
  // (a configuration not approved is said at the compaction and again by the brief's asks).
  const shown = new Set();

  // The hook's stdout for `event` in session `sessionID`, once what it says for the user is shown.
  const ask = async (event, sessionID, fields) => {
    const answer = await hook(event, { session_id: sessionID, ...fields }, directory);
    for (const notice of noticesOf(answer, directory)) {
      const key = `${sessionID}\n${notice}`;
      if (notice && !shown.has(key)) {
        shown.add(key);
        show(client, notice);
      }
    }
    return answer.out;
  };

  // The brief of compaction `boundary` in session `sessionID`, both parts as known by now.
  const briefFor = async (boundary, sessionID) => {
    let known = briefs.get(boundary.id);
    if (!known) {
      const first = briefOf(await ask("SessionStart", sessionID, { source: "compact" }));
      known = { first, second: "", asks: 0, askedAt: compactedHere.has(sessionID) ? Date.now() : 0 };
      briefs.set(boundary.id, known);
    }
    const now = Date.now();
    if (known.first && !known.second && known.asks < MAX_ASKS && now - known.askedAt >= ASK_AGAIN_MS) {
      known.asks += 1;
      known.askedAt = now;
      known.second = briefOf(await ask("UserPromptSubmit", sessionID, {}));
    }
    return known.second ? `${known.first}\n\n${known.second}` : known.first;
  };

  return {
    // Awaited by OpenCode before the summary request: the full history is saved first, and
    // the summariser is told where it is.
    "experimental.session.compacting": async (input, output) => {
      compactedHere.add(input.sessionID);
      const note = noteOf(await ask("PreCompact", input.sessionID, {}));
      if (note && Array.isArray(output.context)) output.context.push(note);
    },
    // A command's expansion (its template from the project's .opencode/command/, the arguments
    // filled in, each !`cmd` replaced by its output) is sent as ordinary user text: marked in its
    // metadata (which the model never sees) with what the user typed, so precompact's reader
    // takes that for the user's request and the expansion for OpenCode's (the key is the reader's
    // COMMAND_MARK, transcript/opencode.py).
    "command.execute.before": async (input, output) => {
      const parts = output && Array.isArray(output.parts) ? output.parts : [];
      for (const part of parts) {
        if (part && part.type === "text") {
          part.metadata = {
            ...(part.metadata && typeof part.metadata === "object" ? part.metadata : {}),
            precompact_command: { name: String(input.command), arguments: String(input.arguments ?? "") },
          };
        }
      }
    },
    event: async ({ event }) => {
      if (event.type === "session.compacted" && event.properties && typeof event.properties.sessionID === "string") {
        await ask("PostCompact", event.properties.sessionID, {});
      }
    },
    // After a compaction the history OpenCode sends starts with the compaction's message: the
    // brief goes there, on every request until the next compaction (OpenCode does not keep
    // text added here), in the same place each time, what the summary left out after the
    // first part in the same text part once it is known.
    "experimental.chat.messages.transform": async (_input, output) => {
      const messages = output && Array.isArray(output.messages) ? output.messages : [];
      const first = messages[0];
      const last = messages[messages.length - 1];
      const boundary = first && Array.isArray(first.parts) ? first.parts.find((p) => p.type === "compaction") : undefined;
      // The summary request itself ends with the new compaction: nothing to add there.
      if (!boundary || (last && Array.isArray(last.parts) && last.parts.some((p) => p.type === "compaction"))) return;
      const brief = await briefFor(boundary, first.info.sessionID);
      if (brief) {
        first.parts.push({
          id: `${boundary.id}-precompact`,
          sessionID: first.info.sessionID,
          messageID: first.info.id,
          type: "text",
          text: brief,
          synthetic: true,
        });
      }
    },
  };
};
