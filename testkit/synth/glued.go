package synth

import "github.com/ytrend/ytrend/store"

// Glued is a handful of videos written against newer emoji, as found on
// real trending pages: the fixture of the glued-words tests. FTS5's Unicode
// tables predate these emoji and keep them inside a token
// (Дорого🤍Идеальные is one FTS5 token); the store splits there, as it does
// for every other emoji.
func Glued() []store.Video {
	return []store.Video{
		{ID: "ru1", Title: "Дорого🤍Идеальные", Description: "Отношения🥰навсегда",
			ChannelID: "UCru", ChannelTitle: "Канал"},
		{ID: "ko1", Title: "🥔EP.3-1 감자 캠핑", Description: "감자밭 브이로그",
			ChannelID: "UCko", ChannelTitle: "감자TV"},
		{ID: "pt1", Title: "Melhores momentos da semana", Description: "Os🤩 gols e as defesas",
			ChannelID: "UCpt", ChannelTitle: "Futebol Hoje"},
		{ID: "ja1", Title: "ゲーム実況🫶まとめ", Description: "今週の配信",
			ChannelID: "UCja", ChannelTitle: "実況チャンネル"},
		// Two glued groups in one title, with a plain word between them: their
		// words are not adjacent.
		{ID: "en1", Title: "Alpha🫠Bravo charlie Delta🫠Echo", Description: "Foxtrot",
			ChannelID: "UCen", ChannelTitle: "Phonetic"},
		// Ordinary text with the same words, unglued.
		{ID: "plain", Title: "Идеальные отношения os gols", Description: "bravo delta",
			ChannelID: "UCplain", ChannelTitle: "Plain"},
	}
}
