"""`python app.py search QUERY`: baseline search (methods extend it), text or example photo, with filters."""
import json

from cli.common import add_filter_args, filters_from_args, print_hits


def add_parser(sub) -> None:
    p = sub.add_parser("search", help="search the catalog")
    p.add_argument("query", nargs="?", default="")
    p.add_argument("--k", type=int, default=None, help="number of results")
    p.add_argument("--image", help="search by an example photo")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_filter_args(p)


def run(ctx, args) -> int:
    engine = ctx.engine()
    notices = engine.ensure_corpus()
    image = None
    if args.image:
        from core.imageio import load_image

        image = load_image(args.image, max_pixels=engine.settings.max_image_pixels)
    result = engine.search.search(args.query, k=args.k, filters=filters_from_args(args), image=image)
    result.notices = notices + result.notices
    if args.json:
        print(json.dumps(result.to_json(), indent=2, default=str))
    else:
        print_hits(result)
    return 0
