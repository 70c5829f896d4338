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
// Order puts read-only tools first and destructive ones last. Recipients
// reads the recipient fields of a mail-sending request (JSON, form or raw
// MIME), so that a call that mails someone is seen.
package exercise
