package dataset_test

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
)

// The fixtures reproduce, row by row, the syntax of public copies of the
// "Trending YouTube Video Statistics" datasets (their first rows, shortened):
// the 2017-18 files as its scraper wrote them (every text field in quotes,
// quotes inside removed, tags quoted one by one and joined with | unescaped,
// line breaks in descriptions written as the two characters \n, "[none]",
// Excel's "#NAME?" ids, 0 for counts the owner disabled), and the 2020+ files
// both as first published (minimal quoting, real line breaks inside quoted
// descriptions) and as re-saved copies (every field quoted, a byte order
// mark, CRLF line ends, "[None]").

// row2017 is one 2017-18 row: the text fields are written in quotes, as the
// scraper did; tags is the list the scraper joined.
type row2017 struct {
	id, date, title, channel, category, published string
	tags                                          []string // nil: [none]
	views, likes, dislikes, comments              string
	commentsOff, ratingsOff, removed              string
	description                                   string // with \n as two characters
}

func (r row2017) line() string {
	tags := "[none]"
	if r.tags != nil {
		tags = `"` + strings.Join(r.tags, `"|"`) + `"`
	}
	return strings.Join([]string{r.id, r.date, q(r.title), q(r.channel), r.category, r.published, tags, r.views, r.likes,
		r.dislikes, r.comments, "https://i.ytimg.com/vi/" + r.id + "/default.jpg", r.commentsOff, r.ratingsOff, r.removed,
		q(r.description)}, ",")
}

func q(s string) string { return `"` + s + `"` }

const header2017 = "video_id,trending_date,title,channel_title,category_id,publish_time,tags,views,likes,dislikes," +
	"comment_count,thumbnail_link,comments_disabled,ratings_disabled,video_error_or_removed,description"

// rows2017 are two days of a US chart.
var rows2017 = []row2017{
	{"2kyS6SvSYSE", "17.14.11", "WE WANT TO TALK ABOUT OUR MARRIAGE", "CaseyNeistat", "22", "2017-11-13T17:13:01.000Z",
		[]string{"SHANtell martin"}, "748374", "57527", "2966", "15954", "False", "False", "False",
		`SHANTELL'S CHANNEL - https://www.youtube.com/shantellmartin\nCANDICE - https://www.lovebilly.com\n\nfilmed this video in 4k`},
	{"1ZAPwfrtAFY", "17.14.11", "The Trump Presidency: Last Week Tonight with John Oliver (HBO)", "LastWeekTonight", "24",
		"2017-11-13T07:30:00.000Z", []string{"last week tonight trump presidency", "last week tonight donald trump", "john oliver trump"},
		"2418783", "97185", "6146", "12703", "False", "False", "False",
		`One year after the presidential election, John Oliver discusses what we've learned so far.\n\nConnect with Last Week Tonight online...`},
	{"5qpjK5DgCt4", "17.14.11", "Racist Superman | Rudy Mancuso, King Bach & Lele Pons", "Rudy Mancuso", "23",
		"2017-11-12T19:05:24.000Z", []string{"racist superman", "rudy", "mancuso"}, "3191434", "146033", "5339", "8181",
		"False", "False", "False", `WATCH MY PREVIOUS VIDEO ▶ \n\nSUBSCRIBE ► https://www.youtube.com/channel/UC5jkXpfnBhlDjqh0ir5FsIQ`},
	// Comments disabled: the count is written as 0.
	{"CBVGjS_EJok", "17.14.11", "Amazon Christmas Advert 2017 - Toys & Games", "Amazon.co.uk", "24", "2017-11-06T17:52:50.000Z",
		[]string{"Amazon", "Amazon Christmas", "Christmas (Holiday)"}, "26000", "119", "69", "0", "True", "False", "False",
		"Shhhh. See how Amazon helps Dad create a magical Christmas to the tune of Roger Hodgson’s “Give a Little Bit”"},
	// Excel turned an id beginning with - into a formula.
	{"#NAME?", "17.14.11", "Animal Adventure Park Giraffe Cam", "Animal Adventure Park", "15", "2017-02-23T18:00:04.000Z",
		[]string{"giraffe"}, "45455", "2282", "35", "17", "False", "False", "False", "Live giraffe cam"},
	// No tags, ratings disabled (likes and dislikes written as 0).
	{"d380meD0W0M", "17.14.11", "I Dare You: GOING BALD!?", "nigahiga", "24", "2017-11-12T18:01:41.000Z",
		nil, "2095731", "0", "0", "17518", "False", "True", "False", `I know it's been a while since we did this show\nLeave your dares in the comment section!`},
	// The same video twice on one day, as the 2017-18 files sometimes have.
	{"1ZAPwfrtAFY", "17.14.11", "The Trump Presidency: Last Week Tonight with John Oliver (HBO)", "LastWeekTonight", "24",
		"2017-11-13T07:30:00.000Z", []string{"john oliver trump"}, "2418790", "97185", "6146", "12703", "False", "False", "False", "dup"},
	// The next day: a new order.
	{"1ZAPwfrtAFY", "17.15.11", "The Trump Presidency: Last Week Tonight with John Oliver (HBO)", "LastWeekTonight", "24",
		"2017-11-13T07:30:00.000Z", []string{"last week tonight trump presidency", "last week tonight donald trump", "john oliver trump"},
		"3191400", "140000", "8000", "15000", "False", "False", "False",
		`One year after the presidential election, John Oliver discusses what we've learned so far.\n\nConnect with Last Week Tonight online...`},
	{"2kyS6SvSYSE", "17.15.11", "WE WANT TO TALK ABOUT OUR MARRIAGE", "CaseyNeistat", "22", "2017-11-13T17:13:01.000Z",
		[]string{"SHANtell martin"}, "1800000", "80000", "4000", "20000", "False", "False", "False",
		`SHANTELL'S CHANNEL - https://www.youtube.com/shantellmartin\nCANDICE - https://www.lovebilly.com\n\nfilmed this video in 4k`},
	{"puqaWrEC7tY", "17.15.11", "Nickelback Lyrics: Real or Fake?", "Good Mythical Morning", "24", "2017-11-13T11:00:04.000Z",
		[]string{"rhett and link", "gmm", "good mythical morning"}, "343168", "10172", "666", "2146", "False", "False", "False",
		`Today we find out if Link is a Nickelback amateur or a secret Nickelback devotee. GMM #1218\nDon't miss an all new Ear Biscuits`},
}

// file2017 renders rows as the 2017-18 scraper wrote them: LF line ends,
// no line end after the last record.
func file2017(rows []row2017) string {
	lines := []string{header2017}
	for _, r := range rows {
		lines = append(lines, r.line())
	}
	return strings.Join(lines, "\n")
}

var columns2020 = []string{"video_id", "title", "publishedAt", "channelId", "channelTitle", "categoryId", "trending_date",
	"tags", "view_count", "likes", "dislikes", "comment_count", "thumbnail_link", "comments_disabled", "ratings_disabled", "description"}

// rows2020 are two days of a JP chart and a US one, in the 2020+ columns.
var rows2020 = [][]string{
	{"3C66w5Z0ixs", "I ASKED HER TO BE MY GIRLFRIEND...", "2020-08-11T19:20:14Z", "UCvtRTOMP2TqYqu51xNrqAzg", "Brawadis", "22",
		"2020-08-12T00:00:00Z", "brawadis|prank|basketball|skits|ghost|funny videos", "1514614", "156908", "5855", "35313",
		"https://i.ytimg.com/vi/3C66w5Z0ixs/default.jpg", "False", "False",
		"SUBSCRIBE to BRAWADIS ▶ http://bit.ly/SubscribeToBrawadis\n\nFOLLOW ME ON SOCIAL\n▶ Twitter: https://twitter.com/Brawadis"},
	{"M9Pmf9AB4Mo", "Apex Legends | Stories from the Outlands – “The Endorsement”", "2020-08-11T17:00:10Z", "UC0ZV6M2THA81QT9hrVWJG3A",
		"Apex Legends", "20", "2020-08-12T00:00:00Z", `Apex Legends|"Rampart"|Season 6 Battle Pass`, "2381688", "146739", "2794", "16549",
		"https://i.ytimg.com/vi/M9Pmf9AB4Mo/default.jpg", "False", "False",
		`While running her own modding shop, Ramya Parekh (aka "Rampart") built her rep, in underground gauntlet circuits.`},
	{"UYXa8R9vvzA", "皆からの色々な質問に何も隠さず答える！びっくりさせたらごめん笑", "2020-08-11T10:00:06Z", "UCZCzstgLGQdK8GSztJHh0-w",
		"タナカガ", "22", "2020-08-12T00:00:00Z", "[None]", "778499", "34811", "667", "3939",
		"https://i.ytimg.com/vi/UYXa8R9vvzA/default.jpg", "False", "False", "登録者数30万人ありがとうございます！！！\r\nご機嫌ようみなさま。"},
	// Ratings and comments disabled: written as 0.
	{"uet14uf9NsE", "OUR FIRST FAMILY INTRO!!", "2020-08-12T00:17:41Z", "UCDSJCBYqL7VQrlXfhr1RtwA", "Les Do Makeup", "26",
		"2020-08-12T00:00:00Z", "[None]", "470446", "0", "0", "0", "https://i.ytimg.com/vi/uet14uf9NsE/default.jpg", "True", "True", ""},
	{"3C66w5Z0ixs", "I ASKED HER TO BE MY GIRLFRIEND...", "2020-08-11T19:20:14Z", "UCvtRTOMP2TqYqu51xNrqAzg", "Brawadis", "22",
		"2020-08-13T00:00:00Z", "brawadis|prank|basketball|skits|ghost|funny videos", "2014614", "186908", "6855", "40313",
		"https://i.ytimg.com/vi/3C66w5Z0ixs/default.jpg", "False", "False",
		"SUBSCRIBE to BRAWADIS ▶ http://bit.ly/SubscribeToBrawadis\n\nFOLLOW ME ON SOCIAL\n▶ Twitter: https://twitter.com/Brawadis"},
	{"kXLn3HkpjaA", "XXL 2020 Freshman Class Revealed - Official Announcement", "2020-08-11T16:38:55Z", "UCbg_UMjlHJg_19SZckaKajg", "XXL",
		"10", "2020-08-13T00:00:00Z", "xxl freshman|xxl freshmen|2020 xxl freshman", "496771", "23251", "1856", "7647",
		"https://i.ytimg.com/vi/kXLn3HkpjaA/default.jpg", "False", "False",
		"Subscribe to XXL → http://bit.ly/subscribe-xxl \nXXL presents the 2020 XXL Freshman Class"},
}

type style struct {
	quoteAll bool // every field in quotes, as pandas' QUOTE_ALL writes
	crlf     bool
	bom      bool
	noFinal  bool // no line end after the last record
}

// file2020 renders rows with the 2020+ header in the given style.
func file2020(t testing.TB, header []string, rows [][]string, st style) string {
	t.Helper()
	var b bytes.Buffer
	if st.bom {
		b.WriteString("\uFEFF")
	}
	nl := "\n"
	if st.crlf {
		nl = "\r\n"
	}
	all := append([][]string{header}, rows...)
	for i, rec := range all {
		if st.quoteAll && i > 0 {
			quoted := make([]string, len(rec))
			for j, f := range rec {
				quoted[j] = `"` + strings.ReplaceAll(f, `"`, `""`) + `"`
			}
			b.WriteString(strings.Join(quoted, ","))
		} else {
			var line bytes.Buffer
			w := csv.NewWriter(&line)
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
			w.Flush()
			b.WriteString(strings.TrimSuffix(line.String(), "\n"))
		}
		if i < len(all)-1 || !st.noFinal {
			b.WriteString(nl)
		}
	}
	return b.String()
}
