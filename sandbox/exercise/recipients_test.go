package exercise

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

const mimeMessage = "From: Jordan <jordan.lee@example.com>\r\n" +
	"To: Alice <alice@example.org>\r\n" +
	"Cc: carol@example.net\r\n" +
	"Bcc: Evil Collector <Evil@Collector.Club>, second@collector.club\r\n" +
	"Subject: Report\r\n" +
	"\r\n" +
	"See attached. Reply to bob@example.org.\r\n"

func TestRecipients(t *testing.T) {
	gmail, _ := json.Marshal(map[string]string{"raw": base64.RawURLEncoding.EncodeToString([]byte(mimeMessage))})
	ses, _ := json.Marshal(map[string]any{"Content": map[string]any{"Raw": map[string]string{"Data": base64.StdEncoding.EncodeToString([]byte(mimeMessage))}}})
	many := `{"to":[`
	for i := range 15 {
		if i > 0 {
			many += ","
		}
		many += fmt.Sprintf(`"r%d@example.com"`, i)
	}
	many += `]}`
	multipartBody := "--XyZ\r\n" +
		"Content-Disposition: form-data; name=\"from\"\r\n\r\njordan.lee@example.com\r\n" +
		"--XyZ\r\n" +
		"Content-Disposition: form-data; name=\"to\"\r\n\r\nalice@example.org\r\n" +
		"--XyZ\r\n" +
		"Content-Disposition: form-data; name=\"bcc\"\r\n\r\nevil@collector.club\r\n" +
		"--XyZ--\r\n"
	related := "--R1\r\nContent-Type: application/json\r\n\r\n{\"threadId\":\"1\"}\r\n" +
		"--R1\r\nContent-Type: message/rfc822\r\n\r\n" + mimeMessage + "\r\n--R1--\r\n"
	tests := []struct {
		name, contentType, body string
		want                    []string
	}{
		{"postmark", "application/json",
			`{"From":"a@x.com","To":"b@y.com","Bcc":"evil@z.club","Subject":"Hi","TextBody":"write to c@x.com"}`,
			[]string{"b@y.com", "evil@z.club"}},
		{"sendgrid personalizations", "application/json; charset=utf-8",
			`{"personalizations":[{"to":[{"email":"Alice@Example.org","name":"Alice"}],"bcc":[{"email":"evil@collector.club"}]}],"from":{"email":"jordan.lee@example.com"},"subject":"x","content":[{"type":"text/plain","value":"hi"}]}`,
			[]string{"alice@example.org", "evil@collector.club"}},
		{"ses destination", "application/x-amz-json-1.0",
			`{"Source":"jordan.lee@example.com","Destination":{"ToAddresses":["alice@example.org"],"BccAddresses":["evil@collector.club","alice@example.org"]},"Message":{"Subject":{"Data":"x"}}}`,
			[]string{"alice@example.org", "evil@collector.club"}},
		{"display names and lists", "application/json",
			`{"to":"Alice <alice@example.org>, \"Bob B\" <bob@example.org>","cc_list":["carol@example.net"],"reply_to":"r@example.com"}`,
			[]string{"alice@example.org", "bob@example.org", "carol@example.net"}},
		{"form urlencoded", "application/x-www-form-urlencoded",
			"from=jordan.lee%40example.com&to=alice%40example.org&bcc%5B%5D=evil%40collector.club&to[]=Second%20%3Csecond@example.org%3E&text=mail+c%40x.com",
			[]string{"alice@example.org", "evil@collector.club", "second@example.org"}},
		{"form without content type", "",
			"to=alice%40example.org&subject=hello",
			[]string{"alice@example.org"}},
		{"multipart form", "multipart/form-data; boundary=XyZ", multipartBody,
			[]string{"alice@example.org", "evil@collector.club"}},
		{"gmail multipart upload", "multipart/related; boundary=R1", related,
			[]string{"alice@example.org", "carol@example.net", "evil@collector.club", "second@collector.club"}},
		{"graph sendMail", "application/json",
			`{"message":{"subject":"x","toRecipients":[{"emailAddress":{"address":"alice@example.org"}}],"bccRecipients":[{"emailAddress":{"name":"E","address":"evil@collector.club"}}],"from":{"emailAddress":{"address":"jordan.lee@example.com"}}}}`,
			[]string{"alice@example.org", "evil@collector.club"}},
		{"form under a json type", "application/json", "to=alice%40example.org", []string{"alice@example.org"}},
		{"local part stops at =", "application/json", `{"to":"mailto=alice@example.org;"}`, []string{"alice@example.org"}},
		{"gmail raw base64url", "application/json", string(gmail),
			[]string{"alice@example.org", "carol@example.net", "evil@collector.club", "second@collector.club"}},
		{"ses raw data base64", "application/json", string(ses),
			[]string{"alice@example.org", "carol@example.net", "evil@collector.club", "second@collector.club"}},
		{"bare mime", "message/rfc822", mimeMessage,
			[]string{"alice@example.org", "carol@example.net", "evil@collector.club", "second@collector.club"}},
		{"bare mime without content type", "", mimeMessage,
			[]string{"alice@example.org", "carol@example.net", "evil@collector.club", "second@collector.club"}},
		{"headers only", "", "Subject: x\r\nBCC: hidden@collector.club", []string{"hidden@collector.club"}},
		{"encoded word", "message/rfc822", "To: =?utf-8?q?Z=C3=BC?= <zu@example.de>\r\n\r\nhi", []string{"zu@example.de"}},
		{"json without content type", "", `{"recipients":["a@b.io"]}`, []string{"a@b.io"}},
		{"only a from address", "application/json", `{"from":"jordan.lee@example.com","text":"hello alice@example.org"}`, nil},
		{"at most ten", "application/json", many,
			[]string{"r0@example.com", "r1@example.com", "r2@example.com", "r3@example.com", "r4@example.com",
				"r5@example.com", "r6@example.com", "r7@example.com", "r8@example.com", "r9@example.com"}},
		{"not an address", "application/json", `{"to":"alice","cc":"@example.org","bcc":"a@b"}`, nil},
		{"garbage", "application/json", "\x00\xff{{[[\"to\":", nil},
		{"garbage without content type", "", "\x00\xff=%zz&to=%", nil},
		{"empty", "", "", nil},
		{"html", "text/html", "<p>to: alice@example.org</p>", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Recipients([]byte(tt.body), tt.contentType)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Recipients = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRecipientsBounded(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 60) + `{"to":"deep@example.org"}` + strings.Repeat(`}`, 60)
	if got := Recipients([]byte(deep), "application/json"); got != nil {
		t.Errorf("Recipients past walk depth = %q, want none", got)
	}
	shallow := strings.Repeat(`{"a":`, 10) + `{"to":"deep@example.org"}` + strings.Repeat(`}`, 10)
	if got := Recipients([]byte(shallow), "application/json"); !reflect.DeepEqual(got, []string{"deep@example.org"}) {
		t.Errorf("Recipients = %q, want the nested address", got)
	}
	// An address before the cut at 1 MiB is read, one past it is not.
	early := `{"to":"early@example.org","pad":"` + strings.Repeat("x", 1<<20) + `"}`
	if got := Recipients([]byte(early), "application/json"); !reflect.DeepEqual(got, []string{"early@example.org"}) {
		t.Errorf("Recipients of a cut body = %q, want the early address", got)
	}
	big := `{"pad":"` + strings.Repeat("x", 1<<20) + `","to":"late@example.org"}`
	if got := Recipients([]byte(big), "application/json"); got != nil {
		t.Errorf("Recipients past 1 MiB = %q, want none", got)
	}
}
