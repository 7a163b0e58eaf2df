CREATE TABLE "store_meta" (
	"key" text COLLATE "C" PRIMARY KEY NOT NULL,
	"value" text COLLATE "C" NOT NULL
);
