// Where demo fires, stations and fire-danger areas live. Each admin area is a box drawn well
// inside the country's land (away from coasts and borders), so anything placed in a box has
// that country as its true ISO code: hotspot `country` stays consistent with coordinates
// without a point-in-polygon library. Boxes are rough, not official NUTS geometry.

/** [west, south, east, north] in degrees (CRS84). */
export type Box = readonly [number, number, number, number];

export interface Country {
  iso2: string;
  /** EFFIS writes some countries differently from ISO 3166 (Greece EL, United Kingdom UK). */
  effis: string;
  name: string;
}

export interface AdminArea {
  nuts: string;
  name: string;
  iso2: string;
  box: Box;
  /** Relative share of fire events (and stations) placed in this area. */
  fireWeight: number;
  /** "Province: Commune, Commune; Province: Commune" */
  places: string;
}

export const COUNTRIES: readonly Country[] = [
  { iso2: 'PT', effis: 'PT', name: 'Portugal' },
  { iso2: 'ES', effis: 'ES', name: 'Spain' },
  { iso2: 'FR', effis: 'FR', name: 'France' },
  { iso2: 'IT', effis: 'IT', name: 'Italy' },
  { iso2: 'GR', effis: 'EL', name: 'Greece' },
  { iso2: 'HR', effis: 'HR', name: 'Croatia' },
  { iso2: 'CY', effis: 'CY', name: 'Cyprus' },
  { iso2: 'TR', effis: 'TR', name: 'Türkiye' },
  { iso2: 'AL', effis: 'AL', name: 'Albania' },
  { iso2: 'BG', effis: 'BG', name: 'Bulgaria' },
  { iso2: 'GB', effis: 'UK', name: 'United Kingdom' },
];

export const ADMIN_AREAS: readonly AdminArea[] = [
  { nuts: 'PT11', name: 'Norte', iso2: 'PT', box: [-8.3, 41.15, -7.0, 41.75], fireWeight: 6,
    places: 'Vila Real: Chaves, Murça, Valpaços; Braga: Vieira do Minho, Cabeceiras de Basto' },
  { nuts: 'PT16', name: 'Centro', iso2: 'PT', box: [-8.5, 39.7, -7.2, 40.9], fireWeight: 8,
    places: 'Coimbra: Pampilhosa da Serra, Góis, Arganil; Viseu: Tondela, Mortágua; Castelo Branco: Sertã, Oleiros' },
  { nuts: 'PT18', name: 'Alentejo', iso2: 'PT', box: [-8.5, 37.6, -7.6, 38.9], fireWeight: 3,
    places: 'Évora: Montemor-o-Novo, Arraiolos; Beja: Odemira, Ourique' },
  { nuts: 'PT15', name: 'Algarve', iso2: 'PT', box: [-8.6, 37.2, -7.6, 37.4], fireWeight: 2,
    places: 'Faro: Monchique, Silves, Loulé, São Brás de Alportel' },
  { nuts: 'ES11', name: 'Galicia', iso2: 'ES', box: [-8.4, 42.2, -7.2, 43.1], fireWeight: 7,
    places: 'Ourense: Verín, O Barco de Valdeorras, Allariz; Lugo: Monforte de Lemos, Quiroga' },
  { nuts: 'ES41', name: 'Castilla y León', iso2: 'ES', box: [-6.0, 41.0, -4.5, 42.0], fireWeight: 4,
    places: 'Zamora: Losacio, Ferreras de Abajo, Alcañices; León: Astorga, La Bañeza' },
  { nuts: 'ES43', name: 'Extremadura', iso2: 'ES', box: [-6.7, 38.5, -5.2, 40.0], fireWeight: 4,
    places: 'Cáceres: Hoyos, Plasencia, Caminomorisco; Badajoz: Alburquerque, Zafra' },
  { nuts: 'ES61', name: 'Andalucía', iso2: 'ES', box: [-6.0, 37.2, -2.5, 38.2], fireWeight: 5,
    places: 'Sevilla: Almadén de la Plata, Constantina; Córdoba: Hornachuelos; Jaén: Andújar' },
  { nuts: 'ES52', name: 'Comunitat Valenciana', iso2: 'ES', box: [-1.2, 38.8, -0.6, 39.8], fireWeight: 2,
    places: 'Valencia: Chiva, Requena, Buñol; Castellón: Villanueva de Viver' },
  { nuts: 'ES51', name: 'Cataluña', iso2: 'ES', box: [0.8, 41.6, 2.2, 42.3], fireWeight: 2,
    places: 'Lleida: Solsona, Tàrrega; Barcelona: Manresa, Berga' },
  { nuts: 'FRL0', name: "Provence-Alpes-Côte d'Azur", iso2: 'FR', box: [5.35, 43.55, 6.6, 44.2], fireWeight: 2,
    places: 'Var: Le Luc, Vidauban, Brignoles; Bouches-du-Rhône: Aix-en-Provence, Rognes' },
  { nuts: 'FRM0', name: 'Corse', iso2: 'FR', box: [8.95, 41.85, 9.3, 42.4], fireWeight: 1,
    places: 'Haute-Corse: Corte, Venaco; Corse-du-Sud: Zicavo' },
  { nuts: 'FRI1', name: 'Aquitaine', iso2: 'FR', box: [-0.9, 43.8, 0.3, 44.5], fireWeight: 1.5,
    places: 'Gironde: Landiras, Hostens; Landes: Mont-de-Marsan, Sabres' },
  { nuts: 'FRJ1', name: 'Languedoc-Roussillon', iso2: 'FR', box: [3.0, 43.6, 3.8, 44.1], fireWeight: 1,
    places: 'Hérault: Lodève, Saint-Guilhem-le-Désert; Gard: Le Vigan' },
  { nuts: 'ITG2', name: 'Sardegna', iso2: 'IT', box: [8.7, 39.5, 9.45, 40.75], fireWeight: 3,
    places: 'Nuoro: Orgosolo, Orune, Bitti; Oristano: Ghilarza, Santu Lussurgiu' },
  { nuts: 'ITG1', name: 'Sicilia', iso2: 'IT', box: [13.6, 37.45, 14.8, 37.85], fireWeight: 4,
    places: 'Enna: Piazza Armerina, Nicosia; Caltanissetta: Mussomeli' },
  { nuts: 'ITF6', name: 'Calabria', iso2: 'IT', box: [16.25, 39.05, 16.7, 39.45], fireWeight: 3,
    places: 'Cosenza: San Giovanni in Fiore, Acri; Crotone: Savelli' },
  { nuts: 'ITI1', name: 'Toscana', iso2: 'IT', box: [11.0, 42.9, 11.7, 43.4], fireWeight: 1,
    places: 'Siena: Montalcino, Radicondoli; Grosseto: Roccastrada' },
  { nuts: 'ITI4', name: 'Lazio', iso2: 'IT', box: [12.2, 42.0, 12.9, 42.5], fireWeight: 1,
    places: 'Roma: Bracciano, Campagnano di Roma; Rieti: Fara in Sabina' },
  { nuts: 'ITF4', name: 'Puglia', iso2: 'IT', box: [16.3, 40.75, 16.9, 41.0], fireWeight: 1.5,
    places: 'Bari: Altamura, Gravina in Puglia, Cassano delle Murge' },
  { nuts: 'EL65', name: 'Peloponnisos', iso2: 'GR', box: [21.75, 37.25, 22.5, 37.85], fireWeight: 3,
    places: 'Arkadia: Megalopoli, Tripoli; Ileia: Andritsaina' },
  { nuts: 'EL61', name: 'Thessalia', iso2: 'GR', box: [21.5, 39.0, 22.4, 39.9], fireWeight: 2,
    places: 'Larisa: Elassona, Farsala; Trikala: Kalambaka' },
  { nuts: 'EL53', name: 'Dytiki Makedonia', iso2: 'GR', box: [21.3, 40.2, 21.9, 40.75], fireWeight: 1,
    places: 'Kozani: Servia, Siatista; Kastoria: Argos Orestiko' },
  { nuts: 'EL43', name: 'Kriti', iso2: 'GR', box: [24.85, 35.08, 25.55, 35.22], fireWeight: 1,
    places: 'Irakleio: Archanes-Asterousia, Viannos, Minoa Pediadas' },
  { nuts: 'EL30', name: 'Attiki', iso2: 'GR', box: [23.65, 38.08, 23.92, 38.25], fireWeight: 1.5,
    places: 'Anatoliki Attiki: Marathonas, Dionysos; Voreios Tomeas Athinon: Kifisia' },
  { nuts: 'HR03', name: 'Jadranska Hrvatska', iso2: 'HR', box: [16.0, 43.65, 16.55, 43.95], fireWeight: 2,
    places: 'Splitsko-dalmatinska: Sinj, Trilj, Muć; Šibensko-kninska: Drniš' },
  { nuts: 'CY00', name: 'Kypros', iso2: 'CY', box: [32.75, 34.8, 33.4, 35.05], fireWeight: 1.5,
    places: 'Lemesos: Arakapas, Kyperounta; Lefkosia: Kakopetria' },
  { nuts: 'TR32', name: 'Aydın, Denizli, Muğla', iso2: 'TR', box: [28.6, 37.05, 29.3, 37.6], fireWeight: 5,
    places: 'Muğla: Köyceğiz, Ula, Menteşe; Denizli: Acıpayam' },
  { nuts: 'TR61', name: 'Antalya, Isparta, Burdur', iso2: 'TR', box: [30.0, 37.05, 30.9, 37.55], fireWeight: 5,
    places: 'Antalya: Korkuteli, Döşemealtı; Burdur: Bucak' },
  { nuts: 'AL02', name: 'Qender', iso2: 'AL', box: [19.9, 41.0, 20.35, 41.4], fireWeight: 2,
    places: 'Elbasan: Gramsh, Cërrik; Tiranë: Krrabë' },
  { nuts: 'AL03', name: 'Jug', iso2: 'AL', box: [19.85, 40.35, 20.35, 40.9], fireWeight: 3,
    places: 'Berat: Skrapar, Poliçan; Gjirokastër: Tepelenë' },
  { nuts: 'BG41', name: 'Yugozapaden', iso2: 'BG', box: [23.3, 41.7, 23.9, 42.1], fireWeight: 2,
    places: 'Blagoevgrad: Razlog, Bansko, Kresna' },
  { nuts: 'BG42', name: 'Yuzhen tsentralen', iso2: 'BG', box: [24.2, 41.7, 25.5, 42.1], fireWeight: 3,
    places: 'Smolyan: Chepelare, Devin; Kardzhali: Ardino' },
  { nuts: 'UKM6', name: 'Highlands and Islands', iso2: 'GB', box: [-4.2, 56.75, -3.3, 57.25], fireWeight: 0.5,
    places: 'Highland: Aviemore, Grantown-on-Spey, Kingussie' },
];

/** Open sea: gas flares and ship fires show up here with a null country. */
export const SEA_BOXES: readonly Box[] = [
  [14.2, 43.0, 14.8, 43.8],
  [24.15, 39.8, 24.6, 40.0],
  [-7.2, 36.4, -6.8, 36.7],
  [12.1, 36.6, 12.5, 37.1],
];

export function countryOf(iso2: string): Country {
  const country = COUNTRIES.find((candidate) => candidate.iso2 === iso2);
  if (!country) throw new Error(`unknown demo country ${iso2}`);
  return country;
}

export function placesOf(area: AdminArea): { province: string; communes: string[] }[] {
  return area.places.split(';').map((part) => {
    const [province = '', communes = ''] = part.split(':');
    return { province: province.trim(), communes: communes.split(',').map((name) => name.trim()) };
  });
}

export function boxCentre(box: Box): { lat: number; lon: number } {
  return { lon: (box[0] + box[2]) / 2, lat: (box[1] + box[3]) / 2 };
}

export function insideBox(box: Box, lat: number, lon: number): boolean {
  return lon >= box[0] && lon <= box[2] && lat >= box[1] && lat <= box[3];
}
