"""The word lists the shop catalogue is generated from: categories, product types, attributes, option values.

Pure data, kept apart from the generator so it can be read (and checked) on its own. The lists are chosen so
WebShop's fuzzy matching cannot confuse them: within a category no two attributes, and within an option pool no
two values, score above 85 with ``rapidfuzz.fuzz.token_set_ratio`` (the tests check this), so "x-large" never
passes for "xx-large" and "pack 2" never passes for "pack 3". The neutral phrases used to pad bullets,
descriptions and reviews never contain an attribute, so an attribute is found in a product's text only when the
product really has it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProductType:
    """One kind of product (``lipstick``): its search phrase, noun words, breadcrumb, options and price range."""

    phrase: str
    nouns: tuple[str, ...]
    path: tuple[str, ...]
    options: tuple[tuple[str, str], ...]  # (group shown on the page, pool in OPTION_POOLS)
    price: tuple[float, float]
    styles: tuple[str, ...]


@dataclass(frozen=True)
class Category:
    """A top-level department with its brands, attribute pool and product types."""

    name: str
    root: str
    brands: tuple[str, ...]
    attributes: tuple[str, ...]
    types: tuple[ProductType, ...]


def _t(
    phrase: str, nouns: str, path: str, options: str, price: tuple[float, float], styles: str
) -> ProductType:
    """Compact constructor: ``nouns``/``styles`` are space-separated, ``path`` uses ' > ', ``options`` is
    'group:pool group:pool'."""
    opts = tuple((o.split(":")[0], o.split(":")[1]) for o in options.split()) if options else ()
    return ProductType(
        phrase, tuple(nouns.split()), tuple(path.split(" > ")), opts, price, tuple(styles.split(","))
    )


OPTION_POOLS: dict[str, tuple[str, ...]] = {
    "lip": ("ruby red", "nude beige", "berry crush", "coral", "mauve", "wine"),
    "lash": ("jet black", "dark brown", "navy", "burgundy"),
    "nail": ("cherry red", "baby pink", "midnight", "lilac", "sage", "gold glitter"),
    "floz": ("0.5 fl oz", "1.7 fl oz", "3.4 fl oz", "6.76 fl oz", "8 fl oz", "16.9 fl oz"),
    "scent": ("lavender", "eucalyptus", "unscented", "citrus", "coconut", "sandalwood"),
    "tech": ("black", "white", "silver", "space gray", "midnight blue", "rose gold"),
    "storage": ("32gb", "64gb", "128gb", "256gb", "512gb"),
    "watch": ("40mm", "42mm", "44mm"),
    "cable": ("3 ft", "6 ft", "10 ft", "25 ft"),
    "bar": ("chocolate chip", "peanut butter", "cookie dough", "salted caramel", "blueberry", "vanilla almond"),
    "pack": ("1 pack", "2 pack", "3 pack", "4 pack", "6 pack"),
    "roast": ("light roast", "medium roast", "dark roast", "espresso roast"),
    "tea": ("jasmine", "mint", "lemon ginger", "peach", "matcha"),
    "oz": ("4 oz", "8 oz", "16 oz", "32 oz"),
    "cocoa": ("sea salt", "raspberry", "orange", "almond", "hazelnut"),
    "jerky": ("original", "teriyaki", "peppered", "sweet and spicy"),
    "snack": ("butter", "kettle corn", "white cheddar", "caramel"),
    "apparel": ("black", "white", "navy blue", "heather gray", "olive green", "burgundy", "light pink", "khaki"),
    "size": ("x-small", "small", "medium", "large", "x-large"),
    "shoe": ("6", "6.5", "7", "7.5", "8", "8.5", "9", "9.5", "10", "10.5", "11", "12"),
    "shoecolor": ("black", "white", "brown", "grey", "navy", "tan"),
    "wood": ("walnut", "oak", "espresso", "white", "black", "gray wash"),
    "rug": ("2x3", "4x6", "5x7", "8x10"),
    "fabric": ("beige", "charcoal", "teal", "mustard", "ivory"),
    "kitchen": ("black", "white", "red", "sage green", "navy"),
    "bottle": ("18 oz", "24 oz", "32 oz", "40 oz"),
    "hose": ("25 ft", "50 ft", "75 ft", "100 ft"),
    "pot": ("4 inch", "6 inch", "8 inch", "10 inch"),
    "garden": ("green", "beige", "terracotta", "charcoal", "navy"),
    "sport": ("purple", "teal", "black", "pink", "blue", "orange"),
    "dumbbell": ("5 lb", "8 lb", "10 lb", "20 lb"),
    "theme": ("animals", "space", "ocean", "dinosaurs", "vehicles", "fairy tale"),
    "toysize": ("mini", "standard", "jumbo"),
    "petsize": ("small", "medium", "large", "x-large"),
    "petcolor": ("red", "blue", "black", "pink", "green"),
    "petflavor": ("chicken", "salmon", "beef", "lamb", "turkey"),
    "ink": ("black ink", "blue ink", "red ink", "assorted colors"),
    "ruling": ("college ruled", "wide ruled", "dot grid", "blank"),
    "office": ("black", "white", "gray", "blue"),
}

CATEGORIES: tuple[Category, ...] = (
    Category(
        "beauty",
        "beauty & personal care",
        ("velvra", "lumiere", "aurelle", "bloomique", "dermaly", "sorella", "kiyomi", "maison rue"),
        (
            "long lasting", "cruelty free", "paraben free", "sulfate free", "fragrance free",
            "dermatologist tested", "travel size", "natural ingredients", "anti aging", "vegan formula",
            "sensitive skin", "easy to apply", "high quality",
        ),
        (
            _t("lipstick", "lipstick", "makeup > lips > lipstick", "color:lip", (6, 28), "matte,satin,creamy"),
            _t("mascara", "mascara", "makeup > eyes > mascara", "color:lash", (5, 24), "volumizing,curling"),
            _t("nail polish", "nail polish", "makeup > nails > nail polish", "color:nail", (4, 18), "glossy,gel"),
            _t("face moisturizer", "face moisturizer", "skin care > face > moisturizers", "size:floz", (9, 48),
               "daily,hydrating,overnight"),
            _t("shampoo", "shampoo", "hair care > shampoo & conditioner > shampoo", "size:floz scent:scent",
               (6, 30), "clarifying,volumizing,moisture"),
            _t("eau de parfum", "eau parfum", "fragrance > women's > eau de parfum", "size:floz", (25, 120),
               "floral,classic,signature"),
            _t("body lotion", "body lotion", "skin care > body > lotions", "size:floz scent:scent", (5, 26),
               "daily,whipped,silky"),
            _t("sunscreen", "sunscreen", "skin care > sun care > sunscreen", "size:floz", (7, 32),
               "mineral,sheer,sport"),
            _t("hair serum", "hair serum", "hair care > styling > serums", "size:floz", (8, 36),
               "smoothing,shine,repair"),
        ),
    ),
    Category(
        "electronics",
        "electronics",
        ("voltrix", "sonique", "nexora", "ampwell", "kinetek", "zephyr audio", "brightcore", "pixelon"),
        (
            "noise cancelling", "fast charging", "water resistant", "long battery life", "easy to install",
            "high definition", "plug and play", "shockproof case", "dual band", "voice control",
            "compact design", "gold plated",
        ),
        (
            _t("wireless earbuds", "earbuds", "audio > headphones > earbuds", "color:tech", (15, 120),
               "true,sport,mini"),
            _t("over ear headphones", "headphones", "audio > headphones > over-ear", "color:tech", (25, 220),
               "studio,foldable,classic"),
            _t("portable speaker", "speaker", "audio > speakers > portable", "color:tech", (18, 150),
               "outdoor,party,pocket"),
            _t("phone charger", "phone charger", "accessories > chargers > wall chargers", "color:tech pack:pack",
               (8, 40), "wall,dual port,travel"),
            _t("power bank", "power bank", "accessories > chargers > power banks", "color:tech", (15, 70),
               "slim,magnetic,rugged"),
            _t("usb flash drive", "flash drive", "computers > storage > flash drives", "capacity:storage",
               (6, 60), "swivel,metal,keychain"),
            _t("smart watch", "watch", "wearables > watches > smart watches", "color:tech size:watch",
               (35, 260), "fitness,classic,sport"),
            _t("hdmi cable", "cable", "accessories > cables > hdmi", "length:cable", (6, 30), "braided,slim,4k"),
            _t("webcam", "webcam", "computers > accessories > webcams", "", (20, 130), "1080p,streaming,wide"),
            _t("wireless mouse", "mouse", "computers > accessories > mice", "color:tech", (9, 60),
               "silent,travel,vertical"),
        ),
    ),
    Category(
        "grocery",
        "grocery & gourmet food",
        ("harvestia", "goldfield", "nutrelle", "pantry row", "sunmill", "wildroot", "casa verde", "oatlands"),
        (
            "gluten free", "sugar free", "non gmo", "usda organic", "keto friendly", "low sodium",
            "dairy free", "high protein", "kosher certified", "caffeine free", "plant based", "ready to eat",
        ),
        (
            _t("protein bars", "protein bars", "snacks > bars > protein bars", "flavor:bar count:pack", (12, 40),
               "chewy,crunchy,layered"),
            _t("ground coffee", "coffee", "beverages > coffee > ground coffee", "roast:roast size:oz", (7, 28),
               "smooth,bold,single origin"),
            _t("green tea", "tea", "beverages > tea > green tea", "flavor:tea count:pack", (4, 22),
               "loose leaf,bagged,premium"),
            _t("granola", "granola", "breakfast > cereals > granola", "flavor:bar size:oz", (4, 16),
               "clustered,honey baked,ancient grain"),
            _t("dark chocolate", "chocolate", "snacks > candy > chocolate bars", "flavor:cocoa count:pack",
               (3, 22), "bittersweet,velvet,artisan"),
            _t("beef jerky", "jerky", "snacks > meat snacks > jerky", "flavor:jerky size:oz", (6, 30),
               "smoked,tender,thick cut"),
            _t("popcorn", "popcorn", "snacks > popcorn > ready popcorn", "flavor:snack count:pack", (3, 18),
               "gourmet,light,movie night"),
            _t("olive oil", "olive oil", "pantry > oils > olive oil", "size:oz", (8, 40),
               "extra virgin,cold pressed,mediterranean"),
            _t("pasta sauce", "pasta sauce", "pantry > sauces > pasta sauce", "size:oz count:pack", (3, 15),
               "marinara,tomato basil,rustic"),
        ),
    ),
    Category(
        "fashion",
        "clothing, shoes & jewelry",
        ("northway", "lunara", "cotswell", "urbanly", "mistral", "fernbrook", "haven & co", "solstice"),
        (
            "machine wash", "hand wash", "button closure", "relaxed fit", "slim fit", "moisture wicking",
            "long sleeve", "short sleeve", "elastic waist", "quick dry", "soft fabric", "cotton blend",
            "high waist",
        ),
        (
            _t("dress", "dress", "women > clothing > dresses", "color:apparel size:size", (18, 70),
               "wrap,midi,maxi"),
            _t("t-shirt", "t-shirt", "men > clothing > shirts", "color:apparel size:size", (8, 30),
               "crew neck,v-neck,graphic"),
            _t("hoodie", "hoodie", "men > clothing > sweatshirts", "color:apparel size:size", (20, 65),
               "pullover,zip-up,fleece"),
            _t("jeans", "jeans", "women > clothing > jeans", "color:apparel size:size", (22, 80),
               "straight leg,skinny,bootcut"),
            _t("leggings", "leggings", "women > clothing > leggings", "color:apparel size:size", (12, 45),
               "yoga,workout,seamless"),
            _t("rain jacket", "jacket", "men > clothing > jackets", "color:apparel size:size", (30, 120),
               "packable,hooded,lined"),
            _t("sweater", "sweater", "women > clothing > sweaters", "color:apparel size:size", (20, 75),
               "cable knit,cardigan,turtleneck"),
            _t("pajama set", "pajama set", "women > clothing > sleepwear", "color:apparel size:size", (16, 50),
               "button down,two piece,lounge"),
            _t("socks", "socks", "men > clothing > socks", "size:size count:pack", (6, 25),
               "ankle,crew,athletic"),
        ),
    ),
    Category(
        "shoes",
        "shoes",
        ("strider", "trailhawk", "paceline", "cobbleworth", "marlowe", "sole theory", "driftwood", "kestrel"),
        (
            "non slip", "arch support", "memory foam", "rubber sole", "breathable mesh", "wide width",
            "water resistant", "leather upper", "cushioned insole", "easy to clean", "lace up closure",
        ),
        (
            _t("running shoes", "shoes", "men > athletic > running", "size:shoe color:shoecolor", (35, 140),
               "road,trail,racing"),
            _t("hiking boots", "boots", "men > outdoor > hiking boots", "size:shoe color:shoecolor", (45, 180),
               "mid,trekking,all terrain"),
            _t("sandals", "sandals", "women > sandals > flat sandals", "size:shoe color:shoecolor", (14, 60),
               "strappy,slide,platform"),
            _t("slippers", "slippers", "women > slippers > house slippers", "size:shoe color:shoecolor",
               (10, 40), "fuzzy,moccasin,cozy"),
            _t("sneakers", "sneakers", "women > fashion sneakers > low top", "size:shoe color:shoecolor",
               (25, 95), "canvas,retro,platform"),
            _t("loafers", "loafers", "men > oxfords & loafers > loafers", "size:shoe color:shoecolor", (30, 120),
               "penny,driving,suede"),
            _t("rain boots", "rain boots", "women > boots > rain boots", "size:shoe color:shoecolor", (20, 70),
               "tall,chelsea,matte"),
            _t("flip flops", "flip flops", "men > sandals > flip flops", "size:shoe color:shoecolor", (8, 35),
               "beach,contoured,classic"),
        ),
    ),
    Category(
        "furniture",
        "home & kitchen",
        ("oakhaven", "nordlys", "loftwise", "brambleton", "vestra home", "copperfield", "modhaus", "timberly"),
        (
            "easy to assemble", "solid wood", "storage space", "mid century", "living room", "space saving",
            "heavy duty", "easy to clean", "metal frame", "stain resistant", "tool free assembly",
        ),
        (
            _t("bookshelf", "bookshelf", "furniture > living room > bookcases", "color:wood", (40, 200),
               "5-tier,ladder,cube"),
            _t("coffee table", "coffee table", "furniture > living room > tables", "color:wood", (50, 260),
               "lift top,round,rectangular"),
            _t("bar stools", "bar stools", "furniture > kitchen & dining > stools", "color:wood count:pack",
               (45, 220), "swivel,counter height,backless"),
            _t("nightstand", "nightstand", "furniture > bedroom > nightstands", "color:wood", (35, 160),
               "two drawer,open shelf,floating"),
            _t("tv stand", "tv stand", "furniture > living room > tv stands", "color:wood", (60, 280),
               "entertainment,corner,low profile"),
            _t("accent chair", "chair", "furniture > living room > chairs", "color:fabric", (80, 320),
               "upholstered,barrel,wingback"),
            _t("area rug", "rug", "home decor > rugs > area rugs", "color:fabric size:rug", (30, 240),
               "shag,vintage,geometric"),
            _t("floor lamp", "floor lamp", "lighting > lamps > floor lamps", "color:wood", (30, 150),
               "arc,tripod,torchiere"),
            _t("storage ottoman", "ottoman", "furniture > living room > ottomans", "color:fabric", (30, 130),
               "folding,tufted,cube"),
        ),
    ),
    Category(
        "kitchen",
        "home & kitchen",
        ("chefly", "ironhearth", "pantrique", "copperleaf", "bakewell", "kitchara", "saltmoor", "greyfield"),
        (
            "dishwasher safe", "bpa free", "non stick", "stainless steel", "heat resistant", "food grade",
            "microwave safe", "leak proof", "oven safe", "ergonomic handle", "induction compatible",
        ),
        (
            _t("frying pan", "frying pan", "kitchen & dining > cookware > skillets", "color:kitchen", (18, 90),
               "12-inch,ceramic,hard anodized"),
            _t("water bottle", "water bottle", "kitchen & dining > drinkware > bottles",
               "color:kitchen size:bottle", (10, 45), "insulated,sport,wide mouth"),
            _t("knife set", "knife set", "kitchen & dining > cutlery > knife sets", "color:kitchen", (25, 150),
               "15-piece,forged,block"),
            _t("cutting board", "cutting board", "kitchen & dining > prep > cutting boards", "count:pack",
               (12, 55), "bamboo,reversible,juice groove"),
            _t("food storage containers", "food storage containers", "kitchen & dining > storage > containers",
               "count:pack", (14, 50), "meal prep,stackable,glass"),
            _t("coffee mug", "coffee mug", "kitchen & dining > drinkware > mugs", "color:kitchen count:pack",
               (8, 35), "ceramic,travel,classic"),
            _t("mixing bowls", "mixing bowls", "kitchen & dining > bakeware > mixing bowls", "color:kitchen",
               (15, 60), "nesting,5-piece,deep"),
            _t("tea kettle", "tea kettle", "kitchen & dining > coffee & tea > kettles", "color:kitchen",
               (20, 80), "whistling,electric,gooseneck"),
            _t("baking sheet", "baking sheet", "kitchen & dining > bakeware > sheets", "count:pack", (10, 40),
               "half sheet,rimmed,jelly roll"),
        ),
    ),
    Category(
        "garden",
        "patio, lawn & garden",
        ("greenwell", "bloomfield", "terraform", "sunpatch", "mossway", "fieldcrest", "verdana", "hedgerow"),
        (
            "weather resistant", "solar powered", "easy to install", "heavy duty", "eco friendly",
            "rust proof", "non toxic", "frost resistant", "adjustable height", "drainage holes",
        ),
        (
            _t("garden hose", "garden hose", "watering equipment > hoses", "length:hose", (20, 90),
               "expandable,flexible,hybrid"),
            _t("plant pots", "plant pots", "gardening > pots & planters > pots", "size:pot count:pack",
               (12, 60), "ceramic,self watering,modern"),
            _t("solar lights", "solar lights", "outdoor lighting > pathway lights", "count:pack", (15, 70),
               "pathway,string,spot"),
            _t("bird feeder", "bird feeder", "wildlife > bird feeders", "color:garden", (12, 60),
               "hanging,window,squirrel guard"),
            _t("pruning shears", "pruning shears", "gardening > hand tools > pruners", "", (9, 45),
               "bypass,anvil,ratchet"),
            _t("garden gloves", "gloves", "gardening > protective gear > gloves", "size:size count:pack",
               (6, 28), "thorn,bamboo,grip"),
            _t("patio umbrella", "umbrella", "patio furniture > umbrellas", "color:garden", (40, 180),
               "market,cantilever,tilting"),
            _t("raised garden bed", "garden bed", "gardening > raised beds", "color:garden", (35, 160),
               "galvanized,cedar,elevated"),
            _t("lawn sprinkler", "sprinkler", "watering equipment > sprinklers", "", (12, 55),
               "oscillating,rotating,impact"),
        ),
    ),
    Category(
        "sports",
        "sports & outdoors",
        ("apexfit", "trailbound", "corestride", "summit peak", "velocita", "ironclad", "bluewater", "ridgeline"),
        (
            "non slip", "extra thick", "adjustable strap", "high density", "lightweight", "quick dry",
            "shock absorbing", "easy to carry", "sweat proof", "reinforced stitching",
        ),
        (
            _t("yoga mat", "yoga mat", "exercise & fitness > yoga > mats", "color:sport", (15, 80),
               "premium,travel,cork"),
            _t("dumbbells", "dumbbells", "exercise & fitness > strength > dumbbells", "weight:dumbbell",
               (18, 120), "hex,neoprene,adjustable"),
            _t("resistance bands", "resistance bands", "exercise & fitness > accessories > bands", "color:sport",
               (8, 35), "loop,fabric,tube"),
            _t("jump rope", "jump rope", "exercise & fitness > cardio > jump ropes", "color:sport", (6, 28),
               "speed,weighted,beaded"),
            _t("camping tent", "tent", "outdoor recreation > camping > tents", "color:sport", (50, 260),
               "dome,cabin,instant"),
            _t("sleeping bag", "sleeping bag", "outdoor recreation > camping > sleeping bags", "color:sport",
               (25, 120), "mummy,rectangular,3-season"),
            _t("hiking backpack", "backpack", "outdoor recreation > hiking > backpacks", "color:sport",
               (30, 160), "daypack,40l,internal frame"),
            _t("bike helmet", "helmet", "cycling > helmets", "color:sport size:size", (25, 110),
               "road,mountain,commuter"),
            _t("foam roller", "foam roller", "exercise & fitness > recovery > foam rollers", "color:sport",
               (10, 45), "textured,smooth,vibrating"),
        ),
    ),
    Category(
        "toys",
        "toys & games",
        ("playnest", "tinkerly", "wonderbox", "brightbean", "kiddo lab", "marblecraft", "jollyjoy", "starling"),
        (
            "non toxic", "battery operated", "stem learning", "easy to assemble", "soft plush",
            "washable fabric", "gift ready", "glow in the dark", "rechargeable battery", "travel friendly",
        ),
        (
            _t("building blocks", "building blocks", "building toys > blocks", "size:toysize", (15, 90),
               "classic,magnetic,creative"),
            _t("jigsaw puzzle", "jigsaw puzzle", "puzzles > jigsaw puzzles", "theme:theme", (8, 35),
               "1000 piece,family,floor"),
            _t("stuffed animal", "stuffed animal", "stuffed animals & plush toys > animals", "size:toysize",
               (8, 45), "cuddly,giant,huggable"),
            _t("remote control car", "car", "vehicles > remote control > cars", "theme:theme", (20, 110),
               "off-road,drift,racing"),
            _t("board game", "board game", "games > board games", "theme:theme", (12, 55),
               "strategy,party,cooperative"),
            _t("dollhouse", "dollhouse", "dolls & accessories > dollhouses", "size:toysize", (30, 180),
               "wooden,victorian,three story"),
            _t("kite", "kite", "sports & outdoor play > kites", "theme:theme", (8, 40), "delta,diamond,parafoil"),
            _t("art set", "art set", "arts & crafts > drawing > sets", "size:toysize", (12, 60),
               "deluxe,portable,wooden case"),
            _t("toy train set", "train set", "vehicles > trains > train sets", "size:toysize", (20, 120),
               "wooden,electric,classic"),
        ),
    ),
    Category(
        "pets",
        "pet supplies",
        ("pawsome", "furlogic", "tailwind", "whiskerly", "barkwell", "petnest", "happy hound", "meadowpaw"),
        (
            "easy to clean", "non slip", "machine washable", "odor control", "grain free", "vet approved",
            "chew resistant", "reflective stitching", "orthopedic support", "natural ingredients",
        ),
        (
            _t("dog bed", "dog bed", "dogs > beds & furniture > beds", "size:petsize color:petcolor", (20, 120),
               "bolster,donut,pillow"),
            _t("cat litter", "cat litter", "cats > litter & housebreaking > litter", "size:oz", (8, 35),
               "clumping,clay,crystal"),
            _t("dog leash", "dog leash", "dogs > collars & leashes > leashes", "color:petcolor", (8, 35),
               "retractable,rope,hands free"),
            _t("dog food", "dog food", "dogs > food > dry food", "flavor:petflavor size:oz", (15, 80),
               "adult,puppy,small breed"),
            _t("cat toy", "cat toy", "cats > toys > teasers", "color:petcolor", (4, 22), "feather,wand,ball"),
            _t("pet brush", "pet brush", "dogs > grooming > brushes", "", (7, 30), "slicker,deshedding,bristle"),
            _t("dog collar", "dog collar", "dogs > collars & leashes > collars", "size:petsize color:petcolor",
               (7, 30), "padded,martingale,breakaway"),
            _t("cat tree", "cat tree", "cats > beds & furniture > trees", "size:petsize", (35, 180),
               "multi level,tower,compact"),
            _t("aquarium", "aquarium", "fish & aquatic pets > aquariums", "size:oz", (30, 200),
               "starter,nano,curved glass"),
        ),
    ),
    Category(
        "office",
        "office products",
        ("quillmark", "deskwise", "inkwell", "paperline", "officio", "penbrook", "stackwell", "ledgerly"),
        (
            "ergonomic design", "heavy duty", "acid free", "refillable", "quick drying", "adjustable height",
            "smudge proof", "recycled paper", "lumbar support", "lay flat binding",
        ),
        (
            _t("ballpoint pens", "pens", "writing > pens > ballpoint", "color:ink count:pack", (5, 25),
               "retractable,fine point,medium point"),
            _t("notebook", "notebook", "paper > notebooks > spiral notebooks", "style:ruling count:pack",
               (4, 24), "spiral,composition,hardcover"),
            _t("desk chair", "desk chair", "furniture > chairs > desk chairs", "color:office", (60, 300),
               "mesh,executive,task"),
            _t("stapler", "stapler", "supplies > staplers", "color:office", (6, 35), "desktop,electric,mini"),
            _t("desk organizer", "desk organizer", "desk accessories > organizers", "color:office", (10, 45),
               "mesh,wooden,rotating"),
            _t("sticky notes", "sticky notes", "paper > notes > sticky notes", "count:pack", (4, 20),
               "super sticky,lined,pastel"),
            _t("printer paper", "printer paper", "paper > copy paper", "count:pack", (8, 55),
               "bright white,multipurpose,premium"),
            _t("file folders", "file folders", "filing > folders", "count:pack", (6, 30),
               "letter size,hanging,colored"),
            _t("desk lamp", "desk lamp", "lighting > desk lamps", "color:office", (15, 70),
               "led,swing arm,clamp"),
            _t("highlighters", "highlighters", "writing > markers > highlighters", "count:pack", (4, 18),
               "chisel tip,pastel,gel"),
        ),
    ),
)

#: Neutral padding for bullets, descriptions and reviews (never an attribute of any category).
USE_CASES = ("everyday use", "home and travel", "busy mornings", "weekend plans", "gifting", "daily routines")
FILLER_BULLETS = (
    "SATISFACTION PROMISE: reach out to our team with any question about your order",
    "WHAT YOU GET: one {phrase} as pictured, packed with care",
    "THOUGHTFUL DETAILS: designed by {brand} to look good and work well",
    "A GREAT GIFT: a welcome choice for friends and family",
)
REVIEW_TEXTS = (
    (5, "love it", "exactly what i wanted and it arrived on time"),
    (5, "great value", "works as described, would buy again"),
    (4, "pretty good", "does the job, the packaging could be better"),
    (4, "nice", "looks like the pictures and feels sturdy enough"),
    (3, "okay", "it is fine for the price but nothing special"),
    (2, "not for me", "it did not match what i expected from the photos"),
    (1, "disappointed", "it stopped working after a couple of weeks"),
)
