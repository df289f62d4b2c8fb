"""Word pools for generated Wikipedia-like tables (names with accents, clubs, countries, films …).

Accented names (é, ñ, ü, ø …) are deliberate: MySQL compares them accent-insensitively, and agents must cope.
Pools only feed the seeded generator in :mod:`.themes`; nothing here is random by itself.
"""

from __future__ import annotations

FIRST_NAMES = (
    "José", "María", "Søren", "Zoë", "François", "Jürgen", "Iñaki", "Ana", "Björn", "Chloé", "Mateo",
    "Renée", "Nicolás", "Ingrid", "Raúl", "Agnès", "Luis", "Dmitri", "Hélène", "Thomas", "Emma", "Oliver",
    "Sofía", "André", "Kimi", "Noël", "Ramón", "Lucía", "Olaf", "Éric", "James", "Grace", "Henry", "Clara",
    "Peter",
)  # fmt: skip
LAST_NAMES = (
    "García", "Müller", "Nuñez", "Dubois", "Johansson", "Hernández", "Kowalski", "Østergaard", "Pérez",
    "Schröder", "Lefèvre", "Gómez", "Brown", "Smith", "O'Neill", "Jiménez", "Räikkönen", "Hülkenberg",
    "Ibáñez", "Rossi", "Moreau", "Fernández", "Nakamura", "Walsh", "Carter", "Bianchi", "Šimek", "Dvořák",
    "Lindqvist", "Álvarez", "Castillo", "Weiß", "Thompson", "Baker", "Mendoza", "Côté",
)  # fmt: skip
CLUBS = (
    "Atlético Madrid", "FC Köln", "Deportivo La Coruña", "Real Sociedad", "Borussia Mönchengladbach",
    "Olympique Lyonnais", "Sevilla FC", "Málaga CF", "Fenerbahçe", "Brøndby IF", "Vitória Guimarães",
    "Górnik Zabrze", "Dinamo Zagreb", "FC Zürich", "Saint-Étienne", "Athletic Bilbao", "Celtic", "Rangers",
    "Aston Villa", "Everton", "Ajax", "PSV Eindhoven", "Benfica", "Porto", "Valencia CF", "Hertha BSC",
    "Werder Bremen", "Lech Poznań", "Slavia Prague", "Rosenborg", "AIK", "Malmö FF", "Club Brugge",
)  # fmt: skip
LEAGUES = (
    "Primera División", "Bundesliga", "Eredivisie", "Ekstraklasa", "Süper Lig", "Allsvenskan",
    "Premiership",
)  # fmt: skip
COUNTRIES = (
    ("Côte d'Ivoire", "Yamoussoukro", "Africa"), ("Cameroon", "Yaoundé", "Africa"),
    ("Senegal", "Dakar", "Africa"), ("Ghana", "Accra", "Africa"), ("Kenya", "Nairobi", "Africa"),
    ("Morocco", "Rabat", "Africa"), ("São Tomé and Príncipe", "São Tomé", "Africa"),
    ("Colombia", "Bogotá", "South America"), ("Brazil", "Brasília", "South America"),
    ("Paraguay", "Asunción", "South America"), ("Peru", "Lima", "South America"),
    ("Chile", "Santiago", "South America"), ("Iceland", "Reykjavík", "Europe"),
    ("Romania", "București", "Europe"), ("Poland", "Warsaw", "Europe"), ("Portugal", "Lisbon", "Europe"),
    ("Austria", "Vienna", "Europe"), ("Denmark", "Copenhagen", "Europe"),
    ("Curaçao", "Willemstad", "Caribbean"), ("Haiti", "Port-au-Prince", "Caribbean"),
    ("Jamaica", "Kingston", "Caribbean"), ("Cuba", "Havana", "Caribbean"), ("Vietnam", "Hà Nội", "Asia"),
    ("Thailand", "Bangkok", "Asia"), ("Nepal", "Kathmandu", "Asia"), ("Mongolia", "Ulaanbaatar", "Asia"),
    ("Malaysia", "Kuala Lumpur", "Asia"), ("Türkiye", "Ankara", "Asia"),
)  # fmt: skip
TITLE_WORDS_A = (
    "The Silent", "A Distant", "The Last", "Midnight", "The Crimson", "Señor", "The Hidden", "Forgotten",
    "The Golden", "Café", "The Broken", "Winter", "The Secret", "Paper", "The Iron", "Little", "Électrique",
)  # fmt: skip
TITLE_WORDS_B = (
    "Harbor", "Garden", "Frontier", "Symphony", "Promise", "Ocean", "Mirror", "Empire", "Station",
    "Orchard", "Lantern", "Tide", "Carnival", "River", "Voyage", "Canyon", "Piñata", "Château", "Kingdom",
    "Echo",
)  # fmt: skip
STUDIOS = (
    "Paramount", "Warner Bros.", "Columbia", "Universal", "20th Century Fox", "Gaumont",
    "Studio Babelsberg",
)  # fmt: skip
PARTIES = (
    "Democratic", "Republican", "Independent", "Libertarian", "Green",
)  # fmt: skip
RESULTS = (
    "Re-elected", "Retired", "Lost re-election", "Defeated in primary",
)  # fmt: skip
STATES = (
    "Virginia", "Ohio", "Georgia", "Texas", "Oregon", "Michigan", "Kentucky", "Colorado", "Nevada", "Iowa",
)  # fmt: skip
PRESIDENTS = (
    "Grover Cleveland", "William McKinley", "Theodore Roosevelt", "William H. Taft", "Woodrow Wilson",
    "Warren G. Harding", "Calvin Coolidge", "Franklin D. Roosevelt", "Harry S. Truman",
    "Dwight D. Eisenhower",
)  # fmt: skip
ENVOY_TITLES = (
    "Envoy Extraordinary and Minister Plenipotentiary", "Ambassador Extraordinary and Plenipotentiary",
    "Chargé d'Affaires",
)  # fmt: skip
CONSTRUCTORS = (
    "Ferrari", "McLaren", "Williams", "Lotus", "Brabham", "Tyrrell", "Renault", "Ligier", "Sauber",
)  # fmt: skip
GRANDS_PRIX = (
    "Monaco Grand Prix", "Brazilian Grand Prix", "Hungarian Grand Prix", "Spanish Grand Prix",
    "Österreich Grand Prix", "Mexican Grand Prix", "Belgian Grand Prix", "Japanese Grand Prix",
)  # fmt: skip
RETIREMENTS = (
    "Engine", "Gearbox", "Collision", "Spun off", "Suspension", "Electrical", "Hydraulics",
)  # fmt: skip
GAMES = (
    "Summer Olympics", "Winter Olympics", "Pan American Games", "Commonwealth Games", "Asian Games",
)  # fmt: skip
MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
    "November", "December",
)  # fmt: skip
