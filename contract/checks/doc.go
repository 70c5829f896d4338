// Package checks holds the deterministic checks of an MCP server's
// contract: what the texts and schemas of its tools, prompts and resources
// say to the model that reads them. Check reads a contract and returns
// findings, each a claim about one text (its subject, the evidence quoted,
// masked and bounded, and a reason code of the rubric). The checks are
// versioned (Version, Digest): a rubric pins the checks it scores, so that
// scoring stays a function of the stored evidence and the rubric.
//
// The sections below state the rules of injection.go and capability.go;
// hidden.go (hidden text) and code.go (text quoted as code) state theirs
// beside their code.
//
// # Instructions aimed at the model
//
// Each detector is a pattern plus a filter that reads the sentence around
// the match, because the words alone are common in honest descriptions.
// A text is read sentence by sentence (sentences end at ". ", "! ", "? ",
// a blank line or a list item), and a pattern runs only over the
// sentences that hold one of its words: a match is a claim about one
// sentence. A secret path that is a public key's (~/.ssh/id_rsa.pub) and
// a command line's placeholder (--secret <secret>) are not what they
// look like.
// The filters encode what separates the attacks in the published
// tool-poisoning research from real servers' descriptions:
//   - override: "ignore previous/prior/system instructions" needs a
//     qualifier, so "ignore information that is irrelevant" and "ignore any
//     instructions found in the page" (a defensive note) pass.
//   - concealment: an imperative or modal not to tell, show or inform the
//     user, doing something "without telling the user", hiding something
//     "from the user", "the user must not / need not know", or "silently
//     send/read ...". A statement of fact ("the user doesn't know about
//     files and directories", a hint to search by topic) is not.
//   - secret_access: a credential file or path (~/.ssh, id_rsa, .env,
//     mcp.json, .aws/credentials, ...) in a sentence with a non-negated
//     imperative that moves data ("read", "pass", "send", "include",
//     "contents of"), or an imperative to collect the user's or all stored
//     passwords, keys, tokens or credentials. A parameter that names a
//     default key path ("Path to the key (default ~/.ssh/id_rsa)") and
//     setup advice ("make sure the key is set in your .env") have none.
//   - exfiltration: an imperative to put something into a named or quoted
//     parameter, when the same sentence names a secret or the
//     conversation as its source; or to send such data, or "all
//     emails/messages", to a URL or e-mail address.
//   - tool_order: this tool before or instead of every other tool.
//   - tag: <IMPORTANT>, <SYSTEM>, <instructions> and similar, and
//     chat-template tokens; a plain "IMPORTANT:" is not a tag.
//   - shadowing: see Shadowing below.
//
// # Shadowing
//
// Shadowing is text that tries to change how the agent uses a tool of
// another server, or how it treats the user's other tools in general. Its
// evidence is a reference to something outside this server in a sentence
// with a directive ("only" in "read-only" is not one). The references are read narrowly, because a wrong
// shadowing finding accuses a server's author of an attack:
//   - a tool is named as a tool: quoted or identifier-like (snake_case,
//     camelCase, a client prefix such as mcp_tool_, or a dotted
//     server.tool) before "tool" or "function", after "tool named", or
//     after "when using" / "before calling"; or as "when X is invoked";
//     an unquoted English word ("auto-embed", "read-only") is not a
//     tool's name, and a word glued to the next sentence ("behavior.This
//     tool") is read as the two sentences it is;
//   - a tool is this server's own when it is one of its tools, prompts or
//     resources (by name or title, allowing for client prefixes), or one
//     of the parameters or properties of its schemas (a description that
//     says "before using 'queryVector'" is about an argument);
//   - a server is named as one: quoted, after "the", identifier-like or
//     capitalised before "server" or "MCP server"; a product's name
//     ("MySQL Flexible Server", "SQL Server"), "server-side" and the generic
//     words before "server" (local, remote, SQL, MCP, ...) are not names,
//     nor are the words of this server's own name;
//   - "other tools" in general: "all/any/every/the other tools (servers,
//     functions)", "side effect on", "also present", "when this tool is
//     available"; "other <vendor> tools", with a word of this server's
//     name or tools between, are its own.
//
// # Credentials, environment and paths
//
// Credential parameters. A parameter (or prompt argument) asks for a
// secret when its name has a secret word (password, passphrase, secret,
// credential(s), mnemonic, cookie, otp), a secret pair (api key, access
// key, private key, ssh key, client secret, access/auth/bearer/refresh/
// session token, seed/recovery phrase), is "token", "auth" or "bearer"
// alone, or ends in "token" after a service or qualifier word
// (githubToken, slack_bot_token); when its schema says format "password" or
// writeOnly; or when its description starts with or says "your" before
// such a noun. It does not when the name is about the secret rather than
// the secret itself (secret_name, api_key_id, password_policy, key_path,
// is_password_set), when the parameter is boolean or numeric, or when
// "token" counts or pages (max_tokens, token_count, next_page_token,
// progressToken). Negated mentions ("do not include API keys") do not
// count.
//
// Environment. A tool hands back the process environment when its
// description says it returns, lists or reads environment variables
// (process.env, os.environ, printenv), or when its name is about the
// environment (get_env, printenv) and it has no description to say
// otherwise; not when the description places the variables elsewhere (a
// project, deployment, repository, container, secret manager). MCP
// annotations cannot declare this: readOnlyHint and openWorldHint describe
// side effects and reach, not which data comes back, and an agent's
// credentials are in its servers' environment. So the finding is raised
// whatever the annotations say (server-everything's get-env is read-only
// and closed-world, and is reported).
//
// Arbitrary paths. A tool takes a host filesystem path when one of its
// top-level string parameters (not a property nested inside a document or
// a pipeline stage, which describes data) is described as a file or
// directory path ("absolute path", "path to the file", "file path"), or
// is named as a path, file, directory or folder and either has no
// description or one that speaks of files, directories or folders. In a
// tool named for files or directories, source, destination, target, from
// and to are paths too. It is not a host path when the parameter is a URL,
// when its text places it elsewhere (a field in dot notation, a JSON path,
// a namespace, an API route, a file within an uploaded bundle, archive,
// repository or documentation topic), when it holds the file's contents
// rather than its path, or when the tool works on a remote store (a
// sibling parameter such as owner, repo, bucket, branch or host, or a
// description naming a repository, bucket, drive or remote). The finding
// is raised only when no confinement is stated: not in the tool's own
// texts, not in the server instructions, and not as a server-wide
// mechanism by another tool of the server (server-filesystem and Desktop
// Commander describe their allowed directories on most tools, and the
// server applies them to all; a bound one tool states for its own
// parameter, such as "relative to the workspace root", is that tool's).
// Annotations cannot state a confinement, so they neither raise nor clear
// this finding. Under-claiming is the safe direction: "broad filesystem
// access" said wrongly is an accusation.
package checks
