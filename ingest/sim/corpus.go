package sim

// The word lists and templates the generator writes titles, descriptions,
// tags and channel names from. Every name is invented; any resemblance to a
// real artist, club or show is a coincidence of common words.
//
// A template is text with {slots}; lexicon.fill replaces each slot with a
// word from the list of the same name (see lexicon.list), or a number.

import "sync"

// Category ids, as videoCategories.list names them for every region.
const (
	catFilm          = "1"
	catMusic         = "10"
	catSports        = "17"
	catGaming        = "20"
	catPeople        = "22"
	catComedy        = "23"
	catEntertainment = "24"
	catNews          = "25"
	catHowto         = "26"
	catScience       = "28"
)

// lexicon is one language's material.
type lexicon struct {
	lang  string   // BCP-47 code for snippet.defaultLanguage
	audio []string // values seen in snippet.defaultAudioLanguage

	words map[string][]string // slot name -> words

	titles   map[string][]string // category -> title templates
	channels map[string][]string // category -> channel-name templates
	descs    map[string][]string // category ("" = any) -> description templates
	follow   []string            // closing lines of descriptions: links, calls to subscribe
	tags     map[string][]string // category -> extra tags

	amounts []string // prize money, in the local currency and style
}

// shared are slot words every language falls back to: invented games and
// gadgets keep their (English) names everywhere, as real ones do.
var shared = map[string][]string{
	"game": {
		"Starfall Legends", "Mecha Arena", "Block Realms", "Neon Drift", "Kingdom Forge",
		"Skyline Racers", "Shadow Tactics Zero", "Pixel Farm Valley", "Rift Royale", "Dungeon Cats",
		"Ocean Odyssey", "Iron Vanguard", "Hollow Peaks", "Turbo Karts X", "Galaxy Miners",
	},
	"product": {
		"Nexa X5", "Orbit Buds 3", "Volt Watch 2", "Lumen Pad Pro", "Aero Book 14",
		"Pulse Phone 12", "Zenith Cam 4K", "Nova Fold", "Quanta Console", "Echo Ring",
	},
	"product2": {
		"Nexa X4", "Orbit Buds 2", "Volt Watch SE", "Lumen Pad Air", "Pulse Phone 11",
		"Zenith Cam Mini", "Nova Flip", "Aero Book 13",
	},
}

// lexicons are built when a world is first generated: their maps were most
// of the package's start-up work, done in every ytrend process.
var lexicons = sync.OnceValue(func() map[string]*lexicon {
	return map[string]*lexicon{
		"en": lexEnglish(),
		"de": lexGerman(),
		"fr": lexFrench(),
		"hi": lexHindi(),
		"pt": lexPortuguese(),
		"ja": lexJapanese(),
	}
})

func lexEnglish() *lexicon {
	return &lexicon{
		lang:  "en",
		audio: []string{"en", "en", "en-US", "en-GB"},
		words: map[string][]string{
			"first":  {"Nova", "Aria", "Jake", "Maya", "Liam", "Zoe", "Ethan", "Chloe", "Marcus", "Ivy", "Noah", "Riley", "Jordan", "Tessa", "Caleb", "Sienna"},
			"last":   {"Kane", "Bloom", "Rivers", "Hart", "Stone", "Vale", "Brooks", "Reyes", "Carter", "Wilde", "Monroe", "Hayes", "Quinn", "Lowe"},
			"band":   {"The Midnight Owls", "Velvet Harbor", "Paper Satellites", "Neon Coast", "Lost Signal Club", "Wild Static", "The Glass Hours", "Silver Lanes"},
			"prefix": {"Lil", "DJ", "Young", "MC", "Big"},
			"song": {
				"Golden Hour", "Back to You", "Electric Heart", "Midnight Drive", "Stay", "Fever Dream",
				"Hold On", "Paper Planes Tonight", "Summer Again", "Runaway", "Ghost Town Love", "Loud",
				"No Sleep", "Blue Skies", "Overthinking", "Wildfire",
			},
			"songA":  {"Golden", "Electric", "Midnight", "Paper", "Summer", "Neon", "Broken", "Silver", "Wild", "Velvet", "Lonely", "Sweet", "Cold", "Crystal"},
			"songB":  {"Hearts", "Drive", "Dreams", "Lights", "Rain", "Fever", "Love", "Skies", "Fire", "Nights", "Roses", "Waves", "Echoes"},
			"team":   {"Harbor City Hawks", "Riverside Rovers", "Metro Lions", "Bay Area Comets", "North Shore United", "Kingsport FC", "Desert Suns", "Granite Bears"},
			"league": {"Premier Cup", "National League", "Pro Series", "Championship"},
			"place":  {"a Walmart", "a Haunted House", "an Island", "a Ferrari", "the World's Smallest Hotel", "a Circle", "a Trampoline Park", "Area 51"},
			"thing":  {"Every Fast Food Burger", "Mystery Boxes", "Gas Station Sushi", "Viral TikTok Gadgets", "$1 vs $1,000 Pizza", "Every Energy Drink", "Airport Food"},
			"city":   {"Tokyo", "New York", "London", "Dubai", "Los Angeles", "Sydney", "Toronto", "Chicago", "Miami"},
			"topic":  {"The Housing Crisis", "AI in Schools", "The Heat Wave", "Interest Rates", "The Election Debate", "The Rail Strike"},
			"event":  {"Wildfire", "Storm", "Power Outage", "Protest", "Flood Warning"},
			"film":   {"The Last Horizon", "Echoes of Tomorrow", "Night Shift", "Cold Water", "The Ninth Door", "Paper Kingdom"},
			"dish":   {"Smash Burgers", "Sourdough Bread", "Chicken Tikka", "Birria Tacos", "Banana Bread", "Ramen"},
			"person": {"My Mom", "My Best Friend", "My Little Brother", "A Stranger", "My Dad"},
			"action": {"Finds Your Browser History", "Tries to Use Technology", "Hears a Noise at 3AM", "Sees the Price of Eggs"},
			"group":  {"Teacher", "Gamer", "Gym Bro", "Online Shopper", "Group Project Member"},
			"word":   {"Nova", "Pixel", "Urban", "Golden", "Midnight", "Echo", "Summit", "Vivid", "Atlas", "Blue", "Bright", "Crafty"},
			"verdict": {
				"Worth It?", "Better Than Expected", "A Huge Mistake?", "The Best One Yet", "After 30 Days",
			},
		},
		titles: map[string][]string{
			catMusic: {
				"{artist} - {song} (Official Music Video)",
				"{artist} - {song} (Official Video)",
				"{artist} ft. {artist2} - {song} (Official Lyric Video)",
				"{artist} - {song} [Official Audio]",
				"{artist} - {song} (Live from {city})",
			},
			catGaming: {
				"{game} - Official Launch Trailer",
				"I Beat {game} Without Taking Damage",
				"{game} Season {n} is HERE! Everything You Need to Know",
				"We Played {game} for 24 Hours Straight",
				"The Hardest {game} Challenge Ever ({n} Attempts)",
			},
			catEntertainment: {
				"I Spent {amount} on {thing}",
				"Last To Leave {place} Wins {amount}",
				"Surprising {person} With {amount}",
				"Trying {thing} in {city}",
				"Survive 100 Days in {place}, Win {amount}",
			},
			catSports: {
				"{team} vs. {team2} | Game Highlights | {league}",
				"{team} vs {team2} Extended Highlights",
				"Top {n} Plays of the Week | {league}",
			},
			catComedy: {
				"When {person} {action}",
				"Every {group} Ever",
				"If {group}s Were Honest",
			},
			catPeople: {
				"Day in My Life Living in {city}",
				"Moving to {city} | Vlog #{n}",
				"I Tried Living Like It's 1999 for a Week",
			},
			catScience: {
				"{product} Review: {verdict}",
				"{product} vs {product2}: Which Should You Buy?",
				"I Tried Every {thing} So You Don't Have To",
			},
			catNews: {
				"{city} {event}: What We Know So Far",
				"{topic}, Explained",
				"LIVE: {topic} Latest Updates",
			},
			catFilm: {
				"{film} | Official Trailer",
				"{film} - Final Trailer ({year})",
				"{film} | Teaser",
			},
			catHowto: {
				"How to Make {dish} at Home",
				"{n} Cleaning Hacks You Need to Know",
				"The Easiest {dish} Recipe Ever",
			},
		},
		channels: map[string][]string{
			catMusic:         {"{artist}", "{artist}VEVO", "{artist} Official"},
			catGaming:        {"{first}Plays", "{word}Gaming", "{first} {last}"},
			catEntertainment: {"{first} {last}", "{word} Squad", "The {word} Show"},
			catSports:        {"{league} Highlights", "{team} TV"},
			catComedy:        {"{word} Comedy", "{first} {last}"},
			catPeople:        {"{first} {last}", "{first} Vlogs"},
			catScience:       {"{word} Tech", "{first} Reviews"},
			catNews:          {"{word} News 24", "{city} Today"},
			catFilm:          {"{word} Pictures", "{word} Films"},
			catHowto:         {"{first}'s Kitchen", "{word} DIY"},
		},
		descs: map[string][]string{
			catMusic: {
				"Official music video for \"{song}\" by {artist}.\n\nListen to \"{song}\" out now: https://{handle}.lnk.to/{slug}\n\nDirected by {first} {last}",
				"{artist} - {song}\nStream/Download: https://{handle}.lnk.to/{slug}\n\nDirector: {first} {last}\nProducer: {first2} {last2}",
			},
			"": {
				"{title}\n\nThanks for watching! Don't forget to like and subscribe.",
				"In today's video: {title}\n\nNew videos every week.\n\nTimestamps:\n0:00 Intro\n1:12 {thing}\n{n}:30 Results",
				"{title}",
				"",
			},
		},
		follow: []string{
			"Subscribe: https://www.youtube.com/@{handle}?sub_confirmation=1",
			"Instagram: https://www.instagram.com/{handle}",
			"TikTok: https://www.tiktok.com/@{handle}",
			"Business inquiries: hello@{handle}.com",
		},
		tags: map[string][]string{
			catMusic:  {"music video", "official video", "new music", "pop", "lyrics"},
			catGaming: {"gaming", "gameplay", "walkthrough", "lets play", "trailer"},
			catSports: {"highlights", "sports", "goals", "best plays"},
			catNews:   {"news", "breaking news", "live"},
			"":        {"vlog", "funny", "challenge", "review", "viral", "trending"},
		},
		amounts: []string{"$10,000", "$100,000", "$1,000,000", "$500", "$50,000"},
	}
}

func lexGerman() *lexicon {
	return &lexicon{
		lang:  "de",
		audio: []string{"de", "de", "de-DE"},
		words: map[string][]string{
			"first":  {"Lena", "Jonas", "Mia", "Lukas", "Hannah", "Felix", "Sophie", "Paul", "Marie", "Emil", "Jule", "Moritz"},
			"last":   {"Sommer", "Berger", "Wagner", "Krüger", "Hoffmann", "Schäfer", "Becker", "Lorenz", "Vogel", "Brandt"},
			"band":   {"Die Nachtfalter", "Kaltfront", "Sternenstaub", "Hafenkinder", "Wolkenkratzer", "Die Zugvögel"},
			"prefix": {"Kay", "Mo", "Lil", "DJ"},
			"song":   {"Herzschlag", "Nie wieder allein", "Sommerregen", "Mitternacht", "Geh nicht", "Wolkenlos", "Zurück zu dir", "Straßenlaternen", "Für uns", "Blaue Stunde"},
			"team":   {"FC Rheinstadt", "SV Nordhafen", "Borussia Waldau", "1. FC Bergheim", "TSV Alpenland", "Eintracht Seeburg", "VfB Talheim", "Union Elbstadt"},
			"league": {"Bundesliga", "2. Bundesliga", "DFB-Pokal"},
			"place":  {"einem Escape Room", "einer Almhütte", "einem Freizeitpark", "einem Supermarkt", "einem Baumhaus", "der Bahn"},
			"thing":  {"Döner", "Gaming-PCs", "Adventskalender", "Supermarkt-Pizzen", "Luxus-Autos", "Tankstellen-Snacks"},
			"city":   {"Berlin", "Hamburg", "München", "Köln", "Leipzig", "Stuttgart", "Dresden", "Frankfurt"},
			"topic":  {"Heizungsgesetz", "Bahnstreik", "Mietpreise", "Rentenreform", "Bürgergeld", "Hitzewelle"},
			"event":  {"Unwetter", "Großbrand", "Stromausfall", "Verkehrschaos", "Hochwasser"},
			"film":   {"Das letzte Licht", "Nordwind", "Die Stille danach", "Zwischen den Welten", "Funkloch"},
			"dish":   {"Käsespätzle", "Schnitzel", "Kartoffelsalat", "Apfelstrudel", "Currywurst", "Flammkuchen"},
			"person": {"Mama", "Papa", "die Lehrerin", "der Chef", "mein kleiner Bruder"},
			"action": {"dein Handy findet", "WLAN-Probleme hat", "zum ersten Mal kocht", "die Stromrechnung sieht"},
			"group":  {"Deutsche im Urlaub", "Gamer", "Studenten", "Eltern"},
			"word":   {"Nord", "Alpen", "Stadt", "Blitz", "Stern", "Hafen", "Kreativ", "Elbe"},
			"verdict": {
				"lohnt sich das?", "besser als erwartet", "eine Enttäuschung?", "nach 30 Tagen",
			},
		},
		titles: map[string][]string{
			catMusic: {
				"{artist} - {song} (Offizielles Musikvideo)",
				"{artist} feat. {artist2} - {song} (Official Video)",
				"{artist} - {song} (Live in {city})",
			},
			catGaming: {
				"Ich spiele {game} zum ersten Mal!",
				"{game}: Alle Neuerungen in Season {n}",
				"24 Stunden in {game} überleben",
				"{game} – Offizieller Trailer (deutsch)",
			},
			catEntertainment: {
				"Wer zuletzt {place} verlässt, gewinnt {amount}!",
				"Wir testen {thing} – billig vs. teuer",
				"24 Stunden in {place} – das ist passiert",
			},
			catSports: {
				"{team} – {team2} | Highlights | {league}, {n}. Spieltag",
				"{team} gegen {team2}: Die Zusammenfassung",
			},
			catComedy: {"Wenn {person} {action}", "Typisch {group}!"},
			catPeople: {"Ein Tag in meinem Leben in {city} | Vlog", "Umzug nach {city}! | Vlog #{n}"},
			catScience: {
				"{product} im Test: {verdict}",
				"{product} vs. {product2} – welches ist besser?",
			},
			catNews: {"{topic}: Was jetzt wichtig ist", "{city}: {event} – was wir wissen"},
			catFilm: {"{film} | Offizieller Trailer | Deutsch", "{film} – Teaser (deutsch)"},
			catHowto: {
				"{dish} wie bei Oma – einfaches Rezept",
				"{n} geniale Haushaltstricks, die jeder kennen sollte",
			},
		},
		channels: map[string][]string{
			catMusic:         {"{artist}", "{artist} Official"},
			catGaming:        {"{first}Zockt", "{word}Gaming", "{first} {last}"},
			catEntertainment: {"{first} {last}", "{word}Crew"},
			catSports:        {"{league} Highlights", "{team} TV"},
			catComedy:        {"{word} Comedy", "{first} {last}"},
			catPeople:        {"{first} {last}", "{first} Vlogs"},
			catScience:       {"{word} Technik", "{first} testet"},
			catNews:          {"{word} Nachrichten", "{city} aktuell"},
			catFilm:          {"{word} Filmverleih", "{word} Kino"},
			catHowto:         {"{first}s Küche", "{word} Selbermachen"},
		},
		descs: map[string][]string{
			catMusic: {
				"Das offizielle Musikvideo zu „{song}“ von {artist}.\n\nJetzt streamen: https://{handle}.lnk.to/{slug}",
			},
			"": {
				"{title}\n\nDanke fürs Zuschauen! Lasst ein Abo da.",
				"Heute: {title}\n\nJeden Sonntag ein neues Video.",
				"{title}",
				"",
			},
		},
		follow: []string{
			"Abonnieren: https://www.youtube.com/@{handle}?sub_confirmation=1",
			"Instagram: https://www.instagram.com/{handle}",
			"Impressum: https://{handle}.de/impressum",
		},
		tags: map[string][]string{
			catMusic:  {"musikvideo", "deutschrap", "pop", "neu"},
			catGaming: {"gaming", "deutsch", "lets play"},
			catSports: {"highlights", "fußball", "tore"},
			catNews:   {"nachrichten", "aktuell"},
			"":        {"vlog", "deutsch", "challenge", "test"},
		},
		amounts: []string{"10.000 €", "1.000 €", "100.000 €", "500 €"},
	}
}

func lexFrench() *lexicon {
	return &lexicon{
		lang:  "fr",
		audio: []string{"fr", "fr", "fr-FR", "fr-CA"},
		words: map[string][]string{
			"first":  {"Léa", "Hugo", "Chloé", "Louis", "Inès", "Nathan", "Manon", "Théo", "Camille", "Jules", "Zoé", "Malik"},
			"last":   {"Moreau", "Lefèvre", "Girard", "Roux", "Fontaine", "Mercier", "Dupuis", "Lambert", "Bonnet", "Faure"},
			"band":   {"Les Étoiles Filantes", "Minuit Pile", "Les Cerfs-Volants", "Bleu Béton", "La Vague"},
			"prefix": {"Nino", "Lil", "DJ", "Tiakola"},
			"song":   {"Comme avant", "Mon cœur", "Dernière danse", "Loin d'ici", "Ciel d'été", "Encore une fois", "Tout recommencer", "Minuit"},
			"team":   {"Olympique Riveraine", "FC Côte d'Azur", "Stade Montclair", "AS Bellerive", "Racing Valmont", "US Sainte-Claire"},
			"league": {"Ligue 1", "Coupe de France", "Top 14"},
			"place":  {"un escape game", "un château", "une île déserte", "un supermarché", "un parc d'attractions"},
			"thing":  {"les kebabs", "les croissants", "les calendriers de l'Avent", "les burgers", "les gadgets TikTok"},
			"city":   {"Paris", "Lyon", "Marseille", "Lille", "Bordeaux", "Montréal", "Québec", "Toulouse"},
			"topic":  {"Réforme des retraites", "Prix de l'énergie", "Canicule", "Grève SNCF", "Intelligence artificielle"},
			"event":  {"Orages violents", "Incendie", "Panne géante", "Manifestation", "Inondations"},
			"film":   {"La Dernière Lumière", "Vent du Nord", "Les Jours heureux", "L'Île aux secrets"},
			"dish":   {"la quiche lorraine", "les crêpes", "le bœuf bourguignon", "la tarte tatin", "la poutine"},
			"person": {"ta mère", "ton prof", "ton patron", "ton petit frère"},
			"action": {"trouve ton téléphone", "découvre TikTok", "cuisine pour la première fois"},
			"group":  {"Français en vacances", "gamers", "étudiants", "parents"},
			"word":   {"Nova", "Lumière", "Étoile", "Azur", "Ciné", "Rapido", "Zénith"},
			"verdict": {
				"ça vaut le coup ?", "meilleur que prévu", "une déception ?", "après 30 jours",
			},
		},
		titles: map[string][]string{
			catMusic: {
				"{artist} - {song} (Clip officiel)",
				"{artist} feat. {artist2} - {song} (Clip Officiel)",
				"{artist} - {song} (Live à {city})",
			},
			catGaming: {
				"Je joue à {game} pour la première fois !",
				"{game} : toutes les nouveautés de la saison {n}",
				"24h pour finir {game}",
			},
			catEntertainment: {
				"Le dernier qui quitte {place} gagne {amount} !",
				"On a testé {thing} : pas cher vs très cher",
				"J'ai passé 24h dans {place}",
			},
			catSports: {
				"{team} - {team2} : le résumé | {league}",
				"{team} vs {team2} | Tous les buts",
			},
			catComedy: {"Quand {person} {action}", "Les {group} en vrai"},
			catPeople: {"Une journée dans ma vie à {city} | Vlog", "On déménage à {city} ! | Vlog #{n}"},
			catScience: {
				"{product} : le test complet – {verdict}",
				"{product} vs {product2} : lequel choisir ?",
			},
			catNews:  {"{topic} : ce qu'il faut savoir", "{city} : {event}, le point sur la situation"},
			catFilm:  {"{film} | Bande-annonce officielle VF", "{film} - Teaser ({year})"},
			catHowto: {"Recette facile : {dish}", "{n} astuces de ménage qui changent la vie"},
		},
		channels: map[string][]string{
			catMusic:         {"{artist}", "{artist} Officiel"},
			catGaming:        {"{first}Joue", "{word} Gaming", "{first} {last}"},
			catEntertainment: {"{first} {last}", "{word} Team"},
			catSports:        {"{league} Officiel", "{team} TV"},
			catComedy:        {"{word} Humour", "{first} {last}"},
			catPeople:        {"{first} {last}", "Les vlogs de {first}"},
			catScience:       {"{word} Tech", "{first} Teste"},
			catNews:          {"{word} Info", "{city} Actu"},
			catFilm:          {"{word} Distribution", "{word} Cinéma"},
			catHowto:         {"La cuisine de {first}", "{word} Astuces"},
		},
		descs: map[string][]string{
			catMusic: {"Clip officiel de « {song} » par {artist}.\n\nÉcoutez « {song} » : https://{handle}.lnk.to/{slug}"},
			"": {
				"{title}\n\nMerci d'avoir regardé ! Abonnez-vous pour ne rien rater.",
				"Aujourd'hui : {title}\n\nNouvelle vidéo chaque semaine.",
				"{title}",
				"",
			},
		},
		follow: []string{
			"Abonne-toi : https://www.youtube.com/@{handle}?sub_confirmation=1",
			"Instagram : https://www.instagram.com/{handle}",
			"Contact pro : contact@{handle}.fr",
		},
		tags: map[string][]string{
			catMusic:  {"clip officiel", "rap français", "musique"},
			catGaming: {"gaming", "français", "let's play"},
			catSports: {"résumé", "football", "buts"},
			catNews:   {"actualité", "info"},
			"":        {"vlog", "humour", "défi", "test"},
		},
		amounts: []string{"10 000 €", "1 000 €", "100 000 €", "500 €"},
	}
}

func lexHindi() *lexicon {
	return &lexicon{
		lang:  "hi",
		audio: []string{"hi", "hi", "hi-IN"},
		words: map[string][]string{
			"first":  {"आरव", "विवान", "अनन्या", "प्रिया", "रोहन", "कविता", "सिमरन", "आदित्य", "नेहा", "अर्जुन", "ईशा", "कबीर"},
			"last":   {"शर्मा", "वर्मा", "कपूर", "मेहता", "सिंह", "चौहान", "राठौर", "अय्यर", "मल्होत्रा", "जोशी"},
			"band":   {"सुर संगम", "धुन बैंड", "रागा रॉक्स"},
			"prefix": {"डीजे", "एमसी"},
			"song":   {"तेरे बिना", "दिल की बातें", "चाँदनी रात", "इश्क़ वाला प्यार", "सपने", "बारिश", "तू ही मेरा", "रंग लगा दे", "जाने दे", "मेरी जान"},
			"team":   {"जयपुर जांबाज़", "लखनऊ लायंस", "पटना पैंथर्स", "कोलकाता किंग्स", "हैदराबाद हॉक्स", "बेंगलुरु ब्लेज़र्स"},
			"league": {"टी20 लीग", "प्रो कबड्डी", "रणजी ट्रॉफी"},
			"country": {
				"ऑस्ट्रेलिया", "इंग्लैंड", "न्यूज़ीलैंड", "दक्षिण अफ्रीका", "श्रीलंका", "बांग्लादेश",
			},
			"show":     {"हँसी का तड़का", "सुपर सिंगर जूनियर", "घर की बात", "प्यार का सफ़र", "कौन बनेगा स्टार"},
			"film":     {"दिल से दोस्ती", "आख़िरी मंज़िल", "रंग दे ज़िंदगी", "सपनों का शहर", "मिशन सूरज"},
			"city":     {"दिल्ली", "मुंबई", "जयपुर", "लखनऊ", "पटना", "कोलकाता", "बेंगलुरु", "हैदराबाद"},
			"topic":    {"नई शिक्षा नीति", "पेट्रोल की कीमत", "मानसून", "बजट", "चुनाव"},
			"event":    {"भारी बारिश", "बड़ा हादसा", "चुनावी रैली", "ट्रैफिक जाम", "आग"},
			"relation": {"मम्मी", "पापा", "बहन", "टीचर", "दोस्त"},
			"group":    {"हॉस्टल वाले दोस्त", "ऑफिस वाले", "शादी वाले रिश्तेदार"},
			"dish":     {"पनीर बटर मसाला", "आलू पराठा", "दाल मखनी", "समोसा", "गाजर का हलवा"},
			"word":     {"ज्ञान", "मस्ती", "धमाका", "सितारे", "खबर"},
			"person":   {"आरव शर्मा", "प्रिया मेहता", "कबीर सिंह"},
		},
		titles: map[string][]string{
			catMusic: {
				"{artist} - {song} | आधिकारिक वीडियो | नया गाना {year}",
				"{song} (फुल वीडियो) | {artist} | {film}",
				"{song} | {artist} और {artist2} | नया हिंदी गाना {year}",
				"{song} - लिरिकल वीडियो | {artist}",
			},
			catSports: {
				"भारत बनाम {country} | {n}वां वनडे | मैच हाइलाइट्स",
				"{team} बनाम {team2} | मैच हाइलाइट्स | {league} {year}",
				"आखिरी ओवर का रोमांच! {team} बनाम {team2}",
			},
			catEntertainment: {
				"{show} | एपिसोड {n} | पूरा एपिसोड",
				"{first} {last} का सबसे मज़ेदार इंटरव्यू",
				"{show} में बड़ा धमाका! | नया प्रोमो",
			},
			catNews: {
				"{city} में {event} | ताज़ा खबर",
				"आज की बड़ी खबरें | {city} से लाइव",
				"{topic} पर बड़ा फैसला | पूरी जानकारी",
			},
			catComedy: {"जब {relation} को पता चला 😂 | कॉमेडी वीडियो", "{group} की ज़िंदगी | फनी वीडियो"},
			catFilm:   {"{film} | आधिकारिक ट्रेलर | {artist}", "{film} | टीज़र | {year}"},
			catGaming: {"{game} में पहली बार जीत! 🔥", "{game} का नया अपडेट | पूरी जानकारी हिंदी में"},
			catHowto:  {"{dish} बनाने का आसान तरीका | सिर्फ {n} मिनट में", "{n} आसान किचन टिप्स जो आपको पता होने चाहिए"},
			catScience: {
				"{product} अनबॉक्सिंग और रिव्यू | क्या यह खरीदना चाहिए?",
				"{product} बनाम {product2} | कौन सा बेहतर है?",
			},
			catPeople: {"{city} में मेरा एक दिन | व्लॉग", "गाँव की ज़िंदगी | व्लॉग {n}"},
		},
		channels: map[string][]string{
			catMusic:         {"{artist}", "{artist} म्यूज़िक"},
			catSports:        {"{league} हाइलाइट्स", "{team} टीवी"},
			catEntertainment: {"{show}", "{word} टीवी"},
			catNews:          {"{word} न्यूज़", "{city} तक"},
			catComedy:        {"{word} कॉमेडी", "{first} {last}"},
			catFilm:          {"{word} फ़िल्म्स", "{word} पिक्चर्स"},
			catGaming:        {"{first} गेमिंग", "{word} गेमर"},
			catHowto:         {"{first} की रसोई", "{word} किचन"},
			catScience:       {"{word} टेक", "टेक {first}"},
			catPeople:        {"{first} {last}", "{first} व्लॉग्स"},
		},
		descs: map[string][]string{
			catMusic: {
				"{title}\n\nगाना: {song}\nगायक: {artist}\nसंगीत: {artist2}\n\nऐसे ही और गाने सुनने के लिए चैनल को सब्सक्राइब करें।",
			},
			"": {
				"{title}\n\nवीडियो पसंद आए तो लाइक और शेयर ज़रूर करें।",
				"{title}\n\nदेखिए सिर्फ {channel} पर। रोज़ नए वीडियो के लिए सब्सक्राइब करें।",
				"{title}",
			},
		},
		follow: []string{
			"सब्सक्राइब करें: https://www.youtube.com/@{handle}?sub_confirmation=1",
			"Instagram: https://www.instagram.com/{handle}",
			"Facebook: https://www.facebook.com/{handle}",
		},
		tags: map[string][]string{
			catMusic:  {"नया गाना", "हिंदी गाने", "bollywood songs", "romantic song"},
			catSports: {"क्रिकेट", "हाइलाइट्स", "cricket highlights"},
			catNews:   {"ताज़ा खबर", "हिंदी न्यूज़", "breaking news"},
			"":        {"कॉमेडी", "हिंदी", "viral", "trending"},
		},
		amounts: []string{"₹1 लाख", "₹10,000", "₹1 करोड़"},
	}
}

func lexPortuguese() *lexicon {
	return &lexicon{
		lang:  "pt",
		audio: []string{"pt", "pt-BR", "pt-BR"},
		words: map[string][]string{
			"first":  {"Ana", "Lucas", "Júlia", "Gabriel", "Beatriz", "Rafael", "Larissa", "Mateus", "Camila", "Thiago", "Yasmin", "Davi"},
			"last":   {"Souza", "Oliveira", "Santos", "Lima", "Ferreira", "Costa", "Ribeiro", "Almeida", "Carvalho", "Rocha"},
			"band":   {"Dupla Sol e Lua", "Banda Maré Alta", "Os Vagalumes", "Trio Cajuína"},
			"prefix": {"MC", "DJ", "Lil"},
			"song":   {"Saudade de Você", "Noite de Verão", "Coração Vazio", "Vai Passar", "Te Esperando", "Meu Lugar", "Batidão", "Segunda Chance"},
			"team":   {"Atlético Serrano", "Esporte Clube Litoral", "Sociedade Vila Verde", "Grêmio Aurora", "Clube Náutico Sul", "União Cerrado"},
			"league": {"Brasileirão", "Copa do Brasil", "Libertadores"},
			"place":  {"uma ilha deserta", "um shopping", "um parque aquático", "uma casa na árvore", "um mercado"},
			"thing":  {"o açaí", "a coxinha", "os hambúrgueres", "os calendários do Advento", "os gadgets virais"},
			"city":   {"São Paulo", "Rio de Janeiro", "Salvador", "Belo Horizonte", "Recife", "Curitiba", "Fortaleza"},
			"topic":  {"Reforma tributária", "Preço da gasolina", "Onda de calor", "Eleições", "Inteligência artificial"},
			"event":  {"Temporal", "Incêndio", "Apagão", "Protesto", "Enchente"},
			"film":   {"A Última Luz", "Vento Norte", "Os Dias Felizes", "Ilha dos Segredos"},
			"dish":   {"pão de queijo", "brigadeiro", "feijoada", "bolo de cenoura", "coxinha"},
			"person": {"minha mãe", "meu pai", "o professor", "meu irmão"},
			"action": {"descobre o TikTok", "acha seu celular", "cozinha pela primeira vez"},
			"group":  {"brasileiros viajando", "gamers", "estudantes", "pais"},
			"word":   {"Nova", "Brasil", "Mega", "Top", "Show", "Luz", "Turbo"},
			"verdict": {
				"vale a pena?", "melhor do que eu esperava", "uma decepção?", "depois de 30 dias",
			},
		},
		titles: map[string][]string{
			catMusic: {
				"{artist} - {song} (Clipe Oficial)",
				"{artist} part. {artist2} - {song} (Ao Vivo)",
				"{artist} - {song} | Videoclipe Oficial",
			},
			catGaming: {
				"Joguei {game} pela primeira vez!",
				"{game}: tudo sobre a temporada {n}",
				"24 horas sobrevivendo no {game}",
			},
			catEntertainment: {
				"O último a sair de {place} ganha {amount}!",
				"Testei {thing} mais barato vs mais caro",
				"Passei 24 horas em {place}",
			},
			catSports: {
				"{team} x {team2} | Melhores Momentos | {league} {year}",
				"{team} x {team2} - Gols e Melhores Momentos",
			},
			catComedy: {"Quando {person} {action}", "Todo {group} é assim"},
			catPeople: {"Um dia na minha vida em {city} | Vlog", "Mudei para {city}! | Vlog #{n}"},
			catScience: {
				"{product}: análise completa – {verdict}",
				"{product} vs {product2}: qual comprar?",
			},
			catNews:  {"{topic}: entenda o que aconteceu", "{city}: {event} – o que se sabe até agora"},
			catFilm:  {"{film} | Trailer Oficial Dublado", "{film} - Teaser ({year})"},
			catHowto: {"Receita fácil de {dish}", "{n} truques de limpeza que mudam a vida"},
		},
		channels: map[string][]string{
			catMusic:         {"{artist}", "{artist} Oficial"},
			catGaming:        {"{first}Games", "{word} Gamer", "{first} {last}"},
			catEntertainment: {"{first} {last}", "Canal {word}"},
			catSports:        {"{league} Oficial", "{team} TV"},
			catComedy:        {"{word} Humor", "{first} {last}"},
			catPeople:        {"{first} {last}", "Vlogs da {first}"},
			catScience:       {"{word} Tech", "{first} Testa"},
			catNews:          {"{word} Notícias", "{city} Agora"},
			catFilm:          {"{word} Filmes", "Cine {word}"},
			catHowto:         {"Cozinha da {first}", "{word} Receitas"},
		},
		descs: map[string][]string{
			catMusic: {"Clipe oficial de \"{song}\" – {artist}.\n\nOuça agora: https://{handle}.lnk.to/{slug}"},
			"": {
				"{title}\n\nObrigado por assistir! Se inscreva e ative o sininho.",
				"Hoje: {title}\n\nVídeo novo toda semana.",
				"{title}",
				"",
			},
		},
		follow: []string{
			"Inscreva-se: https://www.youtube.com/@{handle}?sub_confirmation=1",
			"Instagram: https://www.instagram.com/{handle}",
			"Contato comercial: contato@{handle}.com.br",
		},
		tags: map[string][]string{
			catMusic:  {"clipe oficial", "funk", "sertanejo", "pagode"},
			catGaming: {"gameplay", "português", "jogos"},
			catSports: {"melhores momentos", "futebol", "gols"},
			catNews:   {"notícias", "jornal"},
			"":        {"vlog", "humor", "desafio", "brasil"},
		},
		amounts: []string{"R$ 10.000", "R$ 1.000", "R$ 100 mil", "R$ 500"},
	}
}

func lexJapanese() *lexicon {
	return &lexicon{
		lang:  "ja",
		audio: []string{"ja", "ja", "ja-JP"},
		words: map[string][]string{
			"first":  {"ユウキ", "ハルカ", "ソウタ", "ミオ", "レン", "アオイ", "ヒナタ", "カイト"},
			"last":   {"佐藤", "鈴木", "高橋", "田中", "渡辺", "伊藤", "山本", "中村"},
			"band":   {"夜空ノート", "ミッドナイト・ランナーズ", "ひかりのまち", "東京サイダー", "群青リフレイン"},
			"prefix": {"DJ", "MC"},
			"song":   {"夏の終わりに", "青い約束", "ハロー、未来", "星降る夜", "君とサイダー", "ラストダンス", "さよならの代わりに", "アイデンティティ"},
			"team":   {"東京フェニックス", "大阪ライオンズ", "横浜マリナーズ", "札幌スノーズ", "福岡ホークアイズ", "名古屋ブレイブス"},
			"league": {"Jリーグ", "プロ野球", "Bリーグ"},
			"place":  {"コンビニ", "無人島", "遊園地", "山奥のキャンプ場", "ネットカフェ"},
			"thing":  {"高級寿司", "100均グッズ", "激安ガジェット", "コンビニスイーツ", "駅弁"},
			"city":   {"東京", "大阪", "京都", "福岡", "札幌", "横浜", "名古屋"},
			"topic":  {"円安", "新NISA", "物価高", "AI規制", "少子化対策"},
			"event":  {"大雨", "大規模停電", "火災", "記録的猛暑", "地震"},
			"film":   {"風の向こうへ", "最後の夏休み", "星屑のメロディ", "ぼくらの約束"},
			"dish":   {"親子丼", "唐揚げ", "オムライス", "カレーうどん", "肉じゃが"},
			"person": {"母", "先生", "上司", "親友"},
			"relation": {
				"母親", "先生", "上司", "彼女",
			},
			"group": {"高校生", "社会人", "関西人", "ゲーマー"},
			"word":  {"ハヤテ", "ミライ", "キラリ", "ソラ", "ヒカリ", "ツバサ"},
			"verdict": {
				"買うべき？", "予想以上だった", "正直微妙？", "1ヶ月使った結果",
			},
		},
		titles: map[string][]string{
			catMusic: {
				"【MV】{artist}「{song}」",
				"{artist} - {song} (Official Music Video)",
				"{artist}『{song}』Official Live Video",
			},
			catGaming: {
				"【{game}】初見プレイで神回キタ！",
				"【{game}】最強キャラランキング {year}年最新版",
				"{game} 実況プレイ Part{n}",
			},
			catEntertainment: {
				"【検証】24時間{place}で過ごしてみた結果…",
				"【ドッキリ】{person}に{thing}をプレゼントしてみた",
				"{thing}を全部食べ比べてみた！",
			},
			catSports: {
				"【ハイライト】{team} vs {team2} | {league} 第{n}節",
				"{team}、劇的逆転勝利！ハイライト",
			},
			catNews:   {"【速報】{city}で{event}", "{topic}について専門家が解説"},
			catComedy: {"【コント】{relation}あるある", "{group}あるあるがヤバすぎたwww"},
			catHowto:  {"【簡単レシピ】{dish}の作り方｜{n}分で完成", "知らないと損する家事の裏技{n}選"},
			catFilm:   {"映画『{film}』本予告【{year}年公開】", "『{film}』特報"},
			catScience: {
				"{product} 開封レビュー！{verdict}",
				"{product} vs {product2} 徹底比較",
			},
			catPeople: {"【Vlog】{city}でのんびり休日", "社会人の1日ルーティン｜{city}編"},
		},
		channels: map[string][]string{
			catMusic:         {"{artist}", "{artist} Official YouTube Channel"},
			catGaming:        {"{first}ゲームズ", "{word}ゲーム実況"},
			catEntertainment: {"{word}チャンネル", "{last}{first}"},
			catSports:        {"{league}公式チャンネル", "{team}公式"},
			catNews:          {"{word}ニュース", "{city}テレビNEWS"},
			catComedy:        {"{word}コント", "{last}{first}"},
			catHowto:         {"{first}のキッチン", "{word}の暮らし"},
			catFilm:          {"{word}映画", "{word}ピクチャーズ"},
			catScience:       {"{word}テック", "ガジェット{first}"},
			catPeople:        {"{last}{first}", "{first}の日常"},
		},
		descs: map[string][]string{
			catMusic: {"{artist}「{song}」Music Video\n\n配信中: https://{handle}.lnk.to/{slug}"},
			"": {
				"{title}\n\nご視聴ありがとうございます！チャンネル登録よろしくお願いします。",
				"今回は{title}\n\n高評価・コメントお待ちしています。",
				"{title}",
			},
		},
		follow: []string{
			"チャンネル登録: https://www.youtube.com/@{handle}?sub_confirmation=1",
			"X: https://x.com/{handle}",
			"Instagram: https://www.instagram.com/{handle}",
		},
		tags: map[string][]string{
			catMusic:  {"MV", "J-POP", "新曲"},
			catGaming: {"ゲーム実況", "実況", "gameplay"},
			catSports: {"ハイライト", "サッカー", "野球"},
			catNews:   {"ニュース", "速報"},
			"":        {"検証", "vlog", "おもしろ", "日本"},
		},
		amounts: []string{"100万円", "10万円", "1万円"},
	}
}

// romaji are ASCII syllables for the handles of channels whose names are in
// a script a URL cannot carry as is.
var romaji = []string{
	"ka", "ri", "to", "mi", "sa", "ra", "no", "yu", "ki", "ha", "na", "ta",
	"ro", "an", "vi", "sh", "ar", "ya", "de", "va",
}
