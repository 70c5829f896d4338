// Package exercise prepares the calls of the run phase, in which every
// listed tool is called once inside the sandbox. It is pure: no I/O.
//
// Arguments generates one call's arguments from a tool's input schema:
//
//   - Only required properties are generated, recursively; a root that is
//     not an object schema with properties gets {}. minProperties adds
//     optional properties in declared order.
//   - A value is const, else the first enum value, else a default of the
//     declared type, else one by type: false for booleans, null, minItems
//     items for arrays (distinct ones under uniqueItems), numbers within
//     minimum, maximum, both exclusive forms and multipleOf (1 when it
//     fits), strings within minLength, maxLength and pattern (RE2).
//   - A string takes its format's value (uri, email, hostname, date,
//     date-time, time, uuid, ipv4, ipv6, duration, regex), else one read
//     from the property's name (a path is a decoy in the scratch
//     directory, a directory the scratch directory, a URL, mail address
//     or host the Places ones), else "example"; when the pattern rejects
//     it, fixed candidates and one built from the pattern are tried.
//   - Local $ref (JSON pointers, $defs, definitions) are followed; allOf
//     is merged shallowly; anyOf and oneOf take the first branch that can
//     be satisfied, a null branch last. not, if/then/else,
//     dependentRequired and dependentSchemas are ignored.
//   - Hostile schemas are bounded: depth 32, 64 KiB of output, minLength
//     4096, minItems 64, a number of schema nodes visited. What cannot be
//     satisfied is an error whose message is the reason the tool was not
//     called.
//
// Order puts read-only tools first and destructive ones last (destructiveHint
// true, or, for a tool with no annotations, a name whose first verb is
// delete, remove, drop, rm and the like), keeping listing order within each
// group.
//
// Recipients reads who a mail-sending request addresses, so that a call that
// mails someone is seen:
//
//   - JSON bodies are walked (depth 32) for recipient fields (to, cc, bcc,
//     recipients, ToAddresses, toRecipients, ... compared lower-cased
//     without "_" and "-"), whose strings, arrays and objects ({"email":
//     ...}) give the addresses; sender, reply-to and text fields do not.
//   - Form bodies (urlencoded, multipart/form-data) are read by the same
//     field names, "to[]" included; other multipart bodies part by part.
//   - A MIME message, bare or in a raw, message, mime or data field as text,
//     base64 or base64url (the Gmail API, SES), gives its To, Cc and Bcc.
//   - Addresses are local@domain.tld, lower-cased, deduplicated, in order,
//     at most 10; only the first MiB of a body is read.
package exercise
